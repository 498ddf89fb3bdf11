package io.poyang.net;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Reads a host given as an IP address ("10.0.0.7", "::1", "fe80::1%eth0") without asking a name
 * server: such a host needs no lookup, neither when its peer is added (often on a thread that must
 * not block, such as the I/O thread answering an admin command) nor after each failed connection.
 */
final class AddressLiteral {

    private AddressLiteral() {
    }

    /** The address {@code host} spells, or null when it is not an IP address literal (a name). */
    static InetAddress parse(String host) {
        if (host.indexOf(':') >= 0) {
            try {
                // in brackets the JDK reads it as IPv6 or refuses it, and never asks a name server
                return InetAddress.getByName(host.startsWith("[") ? host : "[" + host + "]");
            } catch (UnknownHostException e) {
                return null;   // not an IPv6 address: treated as a name, whose lookup fails and says so
            }
        }
        byte[] b = new byte[4];
        int part = 0;
        int value = -1;
        for (int i = 0; i <= host.length(); i++) {
            char c = i < host.length() ? host.charAt(i) : '.';
            if (c >= '0' && c <= '9') {
                value = (value < 0 ? 0 : value * 10) + (c - '0');
                if (value > 255) {
                    return null;
                }
            } else if (c == '.' && value >= 0 && part < 4) {
                b[part++] = (byte) value;
                value = -1;
            } else {
                return null;
            }
        }
        if (part != 4) {
            return null;
        }
        try {
            return InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new AssertionError("four bytes are an IPv4 address", e);
        }
    }
}
