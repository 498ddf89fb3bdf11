package io.poyang.benchmark.chaos;

import java.util.List;

/** How many operations of a history ended each way ({@link OpStatus}), for the summaries. */
final class StatusCounts {

    final long ok;
    final long unknown;
    final long failed;

    private StatusCounts(long ok, long unknown, long failed) {
        this.ok = ok;
        this.unknown = unknown;
        this.failed = failed;
    }

    static StatusCounts of(List<Operation> history) {
        long ok = 0;
        long unknown = 0;
        long failed = 0;
        for (Operation op : history) {
            switch (op.status()) {
                case OK:
                    ok++;
                    break;
                case UNKNOWN:
                    unknown++;
                    break;
                default:
                    failed++;
                    break;
            }
        }
        return new StatusCounts(ok, unknown, failed);
    }
}
