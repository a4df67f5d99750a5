import java.io.File;
import javax.xml.XMLConstants;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.SchemaFactory;
import javax.xml.validation.Validator;
import org.xml.sax.SAXParseException;

/**
 * `java test/support/XsdValidate.java SCHEMA.xsd FILE.xml...`: validates each file against the
 * schema with the JDK's XSD 1.0 validator (for machines without xmllint). Prints
 * `FILE validates` or `FILE:LINE: MESSAGE`; exits 1 when any file does not validate.
 */
public class XsdValidate {
  public static void main(String[] args) throws Exception {
    SchemaFactory factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
    Validator validator = factory.newSchema(new File(args[0])).newValidator();
    int failed = 0;
    for (int i = 1; i < args.length; i++) {
      try {
        validator.validate(new StreamSource(new File(args[i])));
        System.out.println(args[i] + " validates");
      } catch (SAXParseException error) {
        System.out.println(args[i] + ":" + error.getLineNumber() + ": " + error.getMessage());
        failed++;
      }
    }
    System.exit(failed == 0 ? 0 : 1);
  }
}
