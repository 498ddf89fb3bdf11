package io.poyang.benchmark;

import io.poyang.common.ErrorCode;
import io.poyang.common.PoyangException;
import io.poyang.dtkv.KvCode;
import io.poyang.dtkv.KvException;
import io.poyang.net.RemoteException;
import io.poyang.net.ResponseCode;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The short name a failed or timed-out operation is counted under in the report ("why did it
 * fail"): the exception's type, and for Poyang's typed errors the code that tells their cases
 * apart ({@code KvException NOT_FOUND}, {@code RemoteException NOT_LEADER},
 * {@code RaftOutcomeUnknownException TIMEOUT}). Few distinct names per run, so the report can
 * count them; the message is left out, since it names keys and addresses and would make every
 * failure a cause of its own.
 */
public final class FailureCause {

    private FailureCause() {
    }

    public static String of(Throwable error) {
        Throwable t = unwrap(error);
        if (t == null) {
            return "no exception";
        }
        String type = t.getClass().getSimpleName();
        if (type.isEmpty()) {
            // an anonymous or hidden class: its binary name still says where it comes from
            type = t.getClass().getName();
        }
        String code = codeOf(t);
        return code == null ? type : type + " " + code;
    }

    /** The failure inside the wrappers that futures and reflection put around it. */
    private static Throwable unwrap(Throwable error) {
        Throwable t = error;
        while ((t instanceof ExecutionException || t instanceof CompletionException
                || t instanceof UndeclaredThrowableException || t instanceof InvocationTargetException)
                && t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t;
    }

    /**
     * The code that names the case: DtKV's own code for a KvException (its ErrorCode is always
     * BUSINESS), the response code for a remote error, else the ErrorCode unless it is INTERNAL
     * (the default, which says nothing the type does not).
     */
    private static String codeOf(Throwable t) {
        if (t instanceof KvException) {
            return KvCode.nameOf(((KvException) t).kvCodeNumber());
        }
        if (t instanceof RemoteException) {
            return ResponseCode.name(((RemoteException) t).responseCode());
        }
        if (t instanceof PoyangException) {
            ErrorCode code = ((PoyangException) t).code();
            return code == ErrorCode.INTERNAL ? null : code.name();
        }
        return null;
    }
}
