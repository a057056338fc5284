// JavaFloats fills in the third column of java17_floats.txt: Java's
// Double.toString or Float.toString of the bits in the second column. Run
// it on Java 17 (the JVM the conformance worker runs on; Java 19 and newer
// print the shortest digits instead):
//
//	java connect/testdata/JavaFloats.java connect/testdata/java17_floats.txt
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

public class JavaFloats {
    public static void main(String[] args) throws Exception {
        Path path = Path.of(args[0]);
        List<String> out = new ArrayList<>();
        for (String row : Files.readAllLines(path)) {
            if (row.isEmpty() || row.startsWith("#")) {
                out.add(row);
                continue;
            }
            String[] cols = row.split(" ");
            String text = cols[0].equals("d")
                ? Double.toString(Double.longBitsToDouble(Long.parseUnsignedLong(cols[1], 16)))
                : Float.toString(Float.intBitsToFloat(Integer.parseUnsignedInt(cols[1], 16)));
            out.add(cols[0] + " " + cols[1] + " " + text);
        }
        Files.write(path, out);
    }
}
