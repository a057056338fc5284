package io.sluice.connect.host;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import org.apache.kafka.connect.errors.RetriableException;

/** The error reply's body, {"message", "trace"} (and "retriable" when it is), from an exception. */
public final class Errors {
    private Errors() {
    }

    /** Strips the wrappers executors and futures put around a plugin's exception. */
    public static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /**
     * The message Kafka Connect's REST API would show (the exception's own message), falling
     * back to the exception's class when it has none, so the agent never gets an empty message.
     */
    public static String message(Throwable t) {
        String message = t.getMessage();
        return message != null ? message : t.toString();
    }

    /** The full stack trace, causes included, as a connector's or task's status shows it. */
    public static String trace(Throwable t) {
        StringWriter out = new StringWriter();
        t.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    public static Map<String, Object> fields(Throwable t) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("message", message(t));
        body.put("trace", trace(t));
        // The agent tries a retriable failure again instead of failing the task.
        if (t instanceof RetriableException) {
            body.put("retriable", true);
        }
        return body;
    }

    public static byte[] body(Throwable t) {
        return Json.bytes(fields(t));
    }
}
