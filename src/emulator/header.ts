/** Every answer of the emulator says so: `verify service` lets order cases run against it without --allow-orders. */
export const EMULATOR_HEADER = 'x-wallet-conformance-emulator';
