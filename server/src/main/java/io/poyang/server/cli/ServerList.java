package io.poyang.server.cli;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The {@code --servers} option of the command-line tools: the nodes' addresses with their node ids.
 * {@code "1=10.0.0.1:9432,2=10.0.0.2:9432"} names the ids; {@code "10.0.0.1:9432,10.0.0.2:9432"}
 * numbers them 1, 2, … in order, so it must list the nodes in node-id order (a node's answer "the
 * leader is node 2" is followed to the second address).
 */
public final class ServerList {

    private ServerList() {
    }

    /** node id → "host:port", in the order given; a {@link CliArgs.UsageException} explains a bad list. */
    public static Map<Integer, String> parse(String option, String list) {
        Map<Integer, String> nodes = new LinkedHashMap<>();
        Boolean named = null;
        int next = 1;
        for (String raw : list.split(",")) {
            String s = raw.trim();
            if (s.isEmpty()) {
                continue;
            }
            int eq = s.indexOf('=');
            boolean hasId = eq > 0;
            if (named != null && named != hasId) {
                throw new CliArgs.UsageException(option + " " + list + ": give every entry an id (1=host:port,"
                        + "2=host:port) or none (host:port in node-id order)");
            }
            named = hasId;
            int id;
            String addr;
            if (hasId) {
                try {
                    id = Integer.parseInt(s.substring(0, eq).trim());
                } catch (NumberFormatException e) {
                    throw new CliArgs.UsageException(option + ": '" + s + "': the node id before '=' is not a number");
                }
                if (id <= 0) {
                    throw new CliArgs.UsageException(option + ": '" + s + "': node ids are positive");
                }
                addr = s.substring(eq + 1).trim();
            } else {
                id = next++;
                addr = s;
            }
            int colon = addr.lastIndexOf(':');
            if (colon <= 0 || colon == addr.length() - 1) {
                throw new CliArgs.UsageException(option + ": '" + s + "': expected host:port");
            }
            try {
                int port = Integer.parseInt(addr.substring(colon + 1));
                if (port < 1 || port > 65535) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new CliArgs.UsageException(option + ": '" + s + "': the port is not in 1..65535");
            }
            if (nodes.put(id, addr) != null) {
                throw new CliArgs.UsageException(option + ": node " + id + " is listed twice");
            }
        }
        if (nodes.isEmpty()) {
            throw new CliArgs.UsageException(option + " names no server");
        }
        return nodes;
    }
}
