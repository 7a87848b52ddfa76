package io.strata.server.network;

import io.netty.channel.DefaultFileRegion;

import java.nio.channels.FileChannel;

/**
 * A slice of a segment file sent with sendfile. Netty's region closes its file when released;
 * segment files are shared by every reader and owned by the log, so this one leaves the
 * channel open. (A segment deleted by retention stays readable for {@code file.delete.delay.ms}
 * after it leaves the log, which covers responses in flight.)
 */
final class SegmentFileRegion extends DefaultFileRegion {
    SegmentFileRegion(FileChannel file, long position, long count) {
        super(file, position, count);
    }

    @Override
    protected void deallocate() {
        // The log owns the file channel.
    }
}
