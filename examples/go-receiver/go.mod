module example.com/go-receiver

go 1.19
