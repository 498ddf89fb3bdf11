package io.poyang.server.process;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** GETs of a node's HTTP endpoint, and the few fields tests read from /health. */
public final class Http {

    public final int status;
    public final String body;
    public final String contentType;

    private Http(int status, String body, String contentType) {
        this.status = status;
        this.body = body;
        this.contentType = contentType;
    }

    /** GET http://127.0.0.1:{@code port}{@code path}; any status (the body of an error too). */
    public static Http get(int port, String path) throws IOException {
        HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:" + port + path).openConnection();
        c.setConnectTimeout(5_000);
        c.setReadTimeout(10_000);
        int status = c.getResponseCode();
        InputStream in = status >= 400 ? c.getErrorStream() : c.getInputStream();
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        if (in != null) {
            byte[] buf = new byte[8192];
            for (int n; (n = in.read(buf)) > 0; ) {
                b.write(buf, 0, n);
            }
            in.close();
        }
        return new Http(status, new String(b.toByteArray(), StandardCharsets.UTF_8), c.getContentType());
    }

    /** A number field of group {@code group} in a /health body ("leader", "term", "commitIndex", "appliedIndex"). */
    static long groupField(String healthBody, int group, String field) {
        Matcher m = Pattern.compile("\\{\"id\":" + group + ",[^}]*\"" + field + "\":(\\d+)").matcher(healthBody);
        if (!m.find()) {
            throw new AssertionError("no " + field + " of group " + group + " in " + healthBody);
        }
        return Long.parseLong(m.group(1));
    }

    /** A string field of group {@code group} in a /health body ("role", "state"). */
    static String groupText(String healthBody, int group, String field) {
        Matcher m = Pattern.compile("\\{\"id\":" + group + ",[^}]*\"" + field + "\":\"([^\"]*)\"").matcher(healthBody);
        if (!m.find()) {
            throw new AssertionError("no " + field + " of group " + group + " in " + healthBody);
        }
        return m.group(1);
    }
}
