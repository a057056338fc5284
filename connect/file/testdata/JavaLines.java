// JavaLines fills in the third column of java_lines.tsv: what Kafka's
// FileStreamSink writes for each record value (PrintStream.println, that is
// String.valueOf, of what JsonConverter makes of the JSON in the second
// column, with schemas.enable from the first). A fourth column is left
// as it is. Run it on Java 17 in UTC with
// Kafka Connect 4.4's jars (tests/conformance fetches them):
//
//	jars=$(ls .cache/connect-4.4.0/*.jar | tr '\n' :)
//	java -Duser.timezone=UTC -cp "$jars" connect/file/testdata/JavaLines.java connect/file/testdata/java_lines.tsv
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.apache.kafka.connect.json.JsonConverter;

public class JavaLines {
    public static void main(String[] args) throws Exception {
        Path path = Path.of(args[0]);
        List<String> out = new ArrayList<>();
        for (String row : Files.readAllLines(path, StandardCharsets.UTF_8)) {
            if (row.isEmpty() || row.startsWith("#")) {
                out.add(row);
                continue;
            }
            String[] cols = row.split("\t", -1);
            JsonConverter converter = new JsonConverter();
            converter.configure(Map.of("schemas.enable", cols[0]), false);
            Object value = converter.toConnectData("t", cols[1].getBytes(StandardCharsets.UTF_8)).value();
            String row2 = cols[0] + "\t" + cols[1] + "\t" + String.valueOf(value);
            // A fourth column, Sluice's known deviation, is kept.
            out.add(cols.length > 3 ? row2 + "\t" + cols[3] : row2);
        }
        Files.write(path, out, StandardCharsets.UTF_8);
    }
}
