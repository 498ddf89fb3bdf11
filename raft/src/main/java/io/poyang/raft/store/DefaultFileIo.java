package io.poyang.raft.store;

import com.sun.nio.file.ExtendedOpenOption;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/** {@link FileIo} over {@link FileChannel}. */
final class DefaultFileIo implements FileIo {

    @Override
    public LogFile open(Path path) throws IOException {
        FileChannel ch = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        return new ChannelFile(path, ch, false);
    }

    @Override
    public LogFile openForRead(Path path) throws IOException {
        return new ChannelFile(path, FileChannel.open(path, StandardOpenOption.READ), false);
    }

    @Override
    public LogFile openExisting(Path path) throws IOException {
        return new ChannelFile(path, FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE), false);
    }

    @Override
    public LogFile openExistingForAlignedWrites(Path path, int alignment) throws IOException {
        long blockBytes;
        try {
            blockBytes = Files.getFileStore(path).getBlockSize();
        } catch (UnsupportedOperationException e) {
            blockBytes = -1;
        }
        if (blockBytes <= 0 || blockBytes > alignment || alignment % blockBytes != 0) {
            return openExisting(path);
        }
        FileChannel ch;
        try {
            ch = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, ExtendedOpenOption.DIRECT);
        } catch (NoSuchFileException e) {
            throw e;
        } catch (UnsupportedOperationException | IOException e) {
            // tmpfs and some network file systems refuse O_DIRECT (EINVAL): buffered writes then
            return openExisting(path);
        }
        return new ChannelFile(path, ch, true);
    }

    @Override
    public void syncDirectory(Path dir) throws IOException {
        // Linux lets a directory be opened read-only and fsynced; that is what makes a create,
        // rename or delete in it durable.
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        }
    }

    @Override
    public void atomicMove(Path from, Path to) throws IOException {
        Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    @Override
    public void delete(Path path) throws IOException {
        Files.deleteIfExists(path);
    }

    private static final class ChannelFile implements LogFile {
        private final Path path;
        private final FileChannel channel;
        private final boolean direct;

        ChannelFile(Path path, FileChannel channel, boolean direct) {
            this.path = path;
            this.channel = channel;
            this.direct = direct;
        }

        @Override
        public boolean bypassesPageCache() {
            return direct;
        }

        @Override
        public Path path() {
            return path;
        }

        @Override
        public int write(ByteBuffer src, long position) throws IOException {
            if (!direct) {
                return channel.write(src, position);
            }
            int want = src.remaining();
            int n = channel.write(src, position);
            if (n != want) {
                // a retry would start off a block boundary and fail with a misleading EINVAL
                throw new IOException("a write of " + want + " bytes at " + position + " of " + path
                        + " (O_DIRECT) wrote only " + n + ": the disk is full or failing (see the kernel log)");
            }
            return n;
        }

        @Override
        public int read(ByteBuffer dst, long position) throws IOException {
            return channel.read(dst, position);
        }

        @Override
        public void force(boolean metadata) throws IOException {
            channel.force(metadata);
        }

        @Override
        public long size() throws IOException {
            return channel.size();
        }

        @Override
        public void setLength(long length) throws IOException {
            long size = channel.size();
            if (length < size) {
                channel.truncate(length);
            } else if (length > size) {
                channel.write(ByteBuffer.allocate(1), length - 1);
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }

        @Override
        public String toString() {
            return path.toString();
        }
    }
}
