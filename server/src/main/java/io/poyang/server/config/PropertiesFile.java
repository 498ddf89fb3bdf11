package io.poyang.server.config;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@code key = value} file that remembers its lines: comments, blank lines and the order of keys
 * survive a rewrite, and every value knows the line it came from, so errors can point at it.
 *
 * <p>The format is the simple part of {@code java.util.Properties}: one {@code key = value} (or
 * {@code key: value}) per line, {@code #} or {@code !} starts a comment line, surrounding blanks are
 * trimmed. There are no escapes and no continuation lines (nothing in Poyang's files needs them); a
 * key set twice is an error rather than a silent override. UTF-8.
 *
 * <p>{@link #writeAtomically()} replaces the file so that a crash leaves the old or the new content,
 * never a mix: a temp file beside it is written and fsynced, renamed over it, and the directory is
 * fsynced.
 */
public final class PropertiesFile {

    /** One line of the file: a comment or blank (key null), or a setting. */
    private static final class Line {
        String text;
        final String key;
        String value;

        Line(String text, String key, String value) {
            this.text = text;
            this.key = key;
            this.value = value;
        }
    }

    private final Path path;
    private final List<Line> lines = new ArrayList<>();
    private final Map<String, Line> byKey = new LinkedHashMap<>();

    private PropertiesFile(Path path) {
        this.path = path;
    }

    /** An empty file to be written at {@code path} (nothing is read). */
    public static PropertiesFile empty(Path path) {
        return new PropertiesFile(path);
    }

    /** Reads and parses {@code path}; a missing, unreadable or malformed file is a {@link ConfigException}. */
    public static PropertiesFile read(Path path) {
        byte[] bytes;
        try {
            bytes = Files.readAllBytes(path);
        } catch (NoSuchFileException e) {
            throw new ConfigException(path, null, path + ": no such file");
        } catch (AccessDeniedException e) {
            throw new ConfigException(path, null, path + ": cannot read it (permission denied)");
        } catch (IOException e) {
            throw new ConfigException(path, null, path + ": cannot read it: " + e, e);
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new ConfigException(path, null, path + ": not valid UTF-8 text");
        }
        if (text.startsWith("\uFEFF")) {
            text = text.substring(1);   // a byte-order mark some editors write: not part of the first key
        }
        PropertiesFile f = new PropertiesFile(path);
        String[] raw = text.split("\r?\n", -1);
        int count = raw.length;
        if (count > 0 && raw[count - 1].isEmpty()) {
            count--;   // the newline that ends the last line
        }
        for (int i = 0; i < count; i++) {
            f.parseLine(raw[i], i + 1);
        }
        return f;
    }

    private void parseLine(String text, int number) {
        String t = text.trim();
        if (t.isEmpty() || t.startsWith("#") || t.startsWith("!")) {
            lines.add(new Line(text, null, null));
            return;
        }
        int eq = t.indexOf('=');
        int colon = t.indexOf(':');
        int sep = eq < 0 ? colon : colon < 0 ? eq : Math.min(eq, colon);
        if (sep <= 0) {
            throw new ConfigException(path, null, path + ":" + number + ": expected 'key = value', found '" + t + "'");
        }
        String key = t.substring(0, sep).trim();
        String value = t.substring(sep + 1).trim();
        Line previous = byKey.get(key);
        if (previous != null) {
            throw new ConfigException(path, key, path + ":" + number + ": " + key + " is set twice (also on line "
                    + lineOf(key) + "); keep one");
        }
        Line l = new Line(text, key, value);
        lines.add(l);
        byKey.put(key, l);
    }

    public Path path() {
        return path;
    }

    /** The value of {@code key}, or null when it is not set. */
    public String get(String key) {
        Line l = byKey.get(key);
        return l == null ? null : l.value;
    }

    public boolean contains(String key) {
        return byKey.containsKey(key);
    }

    /** The keys in file order. */
    public Set<String> keys() {
        return java.util.Collections.unmodifiableSet(byKey.keySet());
    }

    /** The 1-based line {@code key} is on, or 0 when it is not in the file. */
    public int lineOf(String key) {
        Line target = byKey.get(key);
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i) == target) {
                return i + 1;
            }
        }
        return 0;
    }

    /** Where {@code key} is, for messages: "file:line" (or just the file when the key is not in it). */
    public String locate(String key) {
        int line = lineOf(key);
        return String.valueOf(path) + (line > 0 ? ":" + line : "");
    }

    /** An error about the value of {@code key}: "file:line: key = 'value': reason". */
    public ConfigException invalid(String key, String reason) {
        String value = get(key);
        // "key = value  # note" is a common habit (and other formats allow it); here the note is part
        // of the value, which then fails its check with a reason that does not say so
        boolean trailingComment = value != null && value.matches(".*\\s[#!].*");
        return new ConfigException(path, key, locate(key) + ": " + key + " = '" + value + "': " + reason
                + (trailingComment ? " (a '#' after a value is part of the value: put comments on lines of their own)"
                : ""));
    }

    /** Sets {@code key}: its line keeps its place (and the comments around it); a new key is appended. */
    public void set(String key, String value) {
        Line l = byKey.get(key);
        String text = key + " = " + value;
        if (l == null) {
            l = new Line(text, key, value);
            lines.add(l);
            byKey.put(key, l);
        } else if (!l.value.equals(value)) {
            l.value = value;
            l.text = text;
        }
    }

    /** Removes {@code key}'s line (a no-op when it is not set). */
    public void remove(String key) {
        Line l = byKey.remove(key);
        if (l != null) {
            lines.remove(l);
        }
    }

    /** Adds a comment line at the end. */
    public void addComment(String comment) {
        lines.add(new Line("# " + comment, null, null));
    }

    /** The file's text as it would be written. */
    public String text() {
        StringBuilder sb = new StringBuilder();
        for (Line l : lines) {
            sb.append(l.text).append('\n');
        }
        return sb.toString();
    }

    /**
     * Replaces the file with {@link #text()}: {@code <name>.tmp} beside it is written and fsynced,
     * renamed over the file, and the directory fsynced, so a crash at any point leaves the old or the
     * new file whole.
     */
    public void writeAtomically() throws IOException {
        writeAtomically(path, text().getBytes(StandardCharsets.UTF_8));
    }

    /** Writes {@code content} to {@code file} the crash-safe way described at {@link #writeAtomically()}. */
    public static void writeAtomically(Path file, byte[] content) throws IOException {
        Path dir = file.toAbsolutePath().getParent();
        Path tmp = dir.resolve(file.getFileName() + ".tmp");
        try (FileChannel ch = FileChannel.open(tmp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(content);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        fsyncDirectory(dir);
    }

    /** Makes a rename in {@code dir} durable. Some platforms cannot open a directory; there it is skipped. */
    static void fsyncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (java.nio.file.FileSystemException e) {
            // Windows cannot open a directory as a channel; its renames are durable without it
        }
    }
}
