package io.poyang.raft.server;

import io.poyang.net.NioServer;

/**
 * Adds services of an application to a {@link RaftServer}'s service port (the port clients use),
 * beside raft's own RAFT_WRITE and RAFT_STATUS: DtKV registers its reads, watches and pushes this
 * way. Given to {@link RaftServerConfig.Builder#serviceExtension}.
 *
 * <p>{@link #install} runs during {@link RaftServer#start()}, before the service port opens and
 * before the groups start: register processors with {@code service.register(...)} (command numbers
 * outside raft's 1-299) and, if needed, a {@link io.poyang.net.ConnectionListener}. Processors
 * find groups with {@link RaftServer#group(int)}; a group may not be started yet when the first
 * request arrives (answer STOPPING or NOT_LEADER then, as raft does). {@link #uninstall} runs
 * during {@link RaftServer#stop()}, after the service port and the groups stopped.
 */
public interface ServiceExtension {

    void install(RaftServer server, NioServer service);

    default void uninstall(RaftServer server) {
    }
}
