package io.poyang.server.node;

import io.poyang.server.config.ConfigException;
import io.poyang.server.config.NodeConfig;
import io.poyang.server.config.PropertiesFile;
import io.poyang.server.config.ServersConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An IPv6 host: servers.properties must write it in brackets ([::1]:9431), config.properties may
 * write it plainly (::1); the two name the same address.
 */
class Ipv6HostTest {

    @TempDir
    Path tmp;

    private NodeConfig config(String host) throws Exception {
        PropertiesFile p = PropertiesFile.empty(tmp.resolve("config.properties"));
        p.set("nodeId", "1");
        p.set("host", host);
        p.set("replicationPort", "9431");
        p.writeAtomically();
        return NodeConfig.load(p.path());
    }

    @Test
    void aPlainIpv6HostAgreesWithItsBracketedServersLine() throws Exception {
        ServersConfig servers = ServersConfig.singleNode(1, "[::1]:9431");
        assertDoesNotThrow(() -> PoyangNode.checkLayout(config("::1"), servers, null));
        assertDoesNotThrow(() -> PoyangNode.checkLayout(config("[::1]"), servers, null));
    }

    @Test
    void anotherIpv6AddressStillDisagreesAndIsShownInBrackets() throws Exception {
        ConfigException e = assertThrows(ConfigException.class,
                () -> PoyangNode.checkLayout(config("::2"), ServersConfig.singleNode(1, "[::1]:9431"), null));
        assertTrue(e.getMessage().contains("listens on [::2]:9431"), e.getMessage());
    }

    @Test
    void addressesPutIpv6HostsInBrackets() {
        assertEquals("[::1]:9432", PoyangNode.addressOf("::1", 9432));
        assertEquals("[::1]:9432", PoyangNode.addressOf("[::1]", 9432));
        assertEquals("127.0.0.1:9432", PoyangNode.addressOf("127.0.0.1", 9432));
    }
}
