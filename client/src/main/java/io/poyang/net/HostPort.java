package io.poyang.net;

/**
 * Checks a "host:port" address as configuration and admin commands give it: one address, a host
 * name or IPv4 address, or an IPv6 address in brackets ("[::1]:9431"), and a port number.
 */
public final class HostPort {

    private HostPort() {
    }

    /**
     * What is wrong with {@code s} as host:port, or null when nothing is. Port 0 is accepted only
     * when {@code portZeroAllowed} (a node's own port: pick a free one).
     */
    public static String problem(String s, boolean portZeroAllowed) {
        if (s == null || s.isEmpty()) {
            return "expected host:port, got nothing";
        }
        int i = s.lastIndexOf(':');
        if (i <= 0 || i == s.length() - 1) {
            return "expected host:port, got '" + s + "'";
        }
        String host = s.substring(0, i);
        for (int k = 0; k < host.length(); k++) {
            char c = host.charAt(k);
            if (Character.isWhitespace(c) || c == ',' || c == '=' || c == '/' || c == '@') {
                return "'" + s + "' is not one host:port (it has '" + c + "' in its host)";
            }
        }
        boolean bracketed = host.startsWith("[") && host.endsWith("]") && host.length() > 2;
        if (!bracketed && (host.indexOf(':') >= 0 || host.indexOf('[') >= 0 || host.indexOf(']') >= 0)) {
            return "'" + s + "' is not host:port; write an IPv6 address in brackets, as [::1]:9431";
        }
        String port = s.substring(i + 1);
        for (int k = 0; k < port.length(); k++) {
            if (port.charAt(k) < '0' || port.charAt(k) > '9') {
                return "the port of '" + s + "' is not a number";
            }
        }
        if (port.length() > 5 || Integer.parseInt(port) > 65535 || (Integer.parseInt(port) == 0 && !portZeroAllowed)) {
            return "the port of '" + s + "' is out of range (" + (portZeroAllowed ? 0 : 1) + "..65535)";
        }
        return null;
    }

    /** Throws {@link IllegalArgumentException} with {@link #problem} unless {@code s} is a host:port (port 1..65535). */
    public static String check(String s) {
        String p = problem(s, false);
        if (p != null) {
            throw new IllegalArgumentException(p);
        }
        return s;
    }
}
