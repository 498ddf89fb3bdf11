package io.poyang.net;

import io.poyang.codec.PbCallback;

/**
 * Makes a fresh decoder for one body. A decoder may live across several reads (a body split
 * between them) while other connections decode theirs, so each body gets its own instance.
 */
public interface DecoderFactory<T> {

    PbCallback<T> create();
}
