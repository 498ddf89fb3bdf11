package io.poyang.server.demos;

import io.poyang.dtkv.client.KvClient;

import java.io.PrintStream;

/** A DtKV example program: what {@code ./poyang demo NAME} runs against a cluster through a {@link KvClient}. */
interface Demo {

    String name();

    /** One line for {@code --help}. */
    String description();

    void run(KvClient kv, DemoContext ctx, PrintStream out) throws Exception;
}
