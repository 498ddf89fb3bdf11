package io.poyang.net;

import java.util.concurrent.Executor;

/** A registered processor and where it runs (null executor: the I/O thread). */
final class ProcessorEntry {

    final int command;
    final ReqProcessor<Object> processor;
    final Executor executor;

    @SuppressWarnings("unchecked")
    ProcessorEntry(int command, ReqProcessor<?> processor, Executor executor) {
        this.command = command;
        this.processor = (ReqProcessor<Object>) processor;
        this.executor = executor;
    }
}
