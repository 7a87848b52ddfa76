package io.strata.server.network;

import io.netty.buffer.AbstractByteBufAllocator;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.UnpooledDirectByteBuf;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.timeout.IdleStateEvent;
import io.strata.protocol.Frames;
import io.strata.protocol.message.ApiMessageType;
import io.strata.protocol.message.ApiVersionsRequestData;
import io.strata.protocol.message.ApiVersionsResponseData;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link KafkaConnection} over {@link EmbeddedChannel}s (no sockets, no threads): framing, at
 * most one request in flight plus one frame beyond it, memory reserved before bytes are
 * buffered, and every path that releases a frame and its reservation. After each test the pool
 * is empty, every buffer the connections allocated (and every buffer the test sent in) has been
 * released, and Netty's paranoid leak detector reports nothing.
 */
class KafkaConnectionTest {
    private static final int MAX_REQUEST_BYTES = 10_000;
    private static final int FRAME_BYTES = 4_000;

    private final RequestChannel requestChannel = new RequestChannel(16);
    private final ConnectionQuotas quotas = new ConnectionQuotas(Integer.MAX_VALUE, Integer.MAX_VALUE);
    private final List<Connection> connections = new ArrayList<>();
    private RequestMemoryPool pool = RequestMemoryPool.bounded(100_000, MAX_REQUEST_BYTES);
    private int correlationId;

    /** Remembers the buffers it hands out, weakly: the leak detector checks those collected, the test those still reachable. */
    private static final class TrackingAllocator extends AbstractByteBufAllocator {
        final List<WeakReference<ByteBuf>> allocated = new ArrayList<>();
        int largestAllocationBytes;

        TrackingAllocator() {
            super(true);
        }

        @Override
        protected ByteBuf newDirectBuffer(int initialCapacity, int maxCapacity) {
            return track(new UnpooledDirectByteBuf(this, initialCapacity, maxCapacity), initialCapacity);
        }

        @Override
        protected ByteBuf newHeapBuffer(int initialCapacity, int maxCapacity) {
            return track(new UnpooledHeapByteBuf(this, initialCapacity, maxCapacity), initialCapacity);
        }

        @Override
        public boolean isDirectBufferPooled() {
            return false;
        }

        private ByteBuf track(ByteBuf buffer, int capacity) {
            allocated.add(new WeakReference<>(buffer));
            largestAllocationBytes = Math.max(largestAllocationBytes, capacity);
            return buffer;
        }

        void assertAllReleased() {
            for (WeakReference<ByteBuf> reference : allocated) {
                ByteBuf buffer = reference.get();
                assertThat(buffer == null ? 0 : buffer.refCnt()).as("reference count of %s", buffer).isZero();
            }
        }
    }

    private record Connection(EmbeddedChannel channel, KafkaConnection handler, TrackingAllocator allocator) {
        void send(ByteBuf bytes) {
            channel.writeInbound(bytes);
        }

        boolean reading() {
            return handler.isReading();
        }
    }

    @BeforeAll
    static void paranoidLeakDetection() {
        LeakDetection.enableParanoid();
    }

    @AfterAll
    static void restoreLeakDetection() {
        LeakDetection.restoreLevel();
    }

    @AfterEach
    void everythingReleased() {
        for (Connection connection : connections) {
            connection.channel().finishAndReleaseAll();
        }
        assertThat(requestChannel.size()).as("requests left unanswered by the test").isZero();
        assertThat(pool.usedBytes()).as("bytes still reserved: %s", pool).isZero();
        assertThat(pool.waitingCount()).isZero();
        for (Connection connection : connections) {
            connection.allocator().assertAllReleased();
        }
        LeakDetection.assertNoLeaks();
    }

    private Connection connect() throws Exception {
        KafkaConnection handler = new KafkaConnection("PLAINTEXT", requestChannel, quotas, pool, MAX_REQUEST_BYTES, NetworkObserver.NONE);
        EmbeddedChannel channel = new EmbeddedChannel(false, false) {
            @Override
            protected SocketAddress remoteAddress0() {
                return new InetSocketAddress("127.0.0.1", 40000);
            }
        };
        TrackingAllocator allocator = new TrackingAllocator();
        channel.config().setAllocator(allocator);
        channel.pipeline().addLast(handler);
        channel.register();
        Connection connection = new Connection(channel, handler, allocator);
        connections.add(connection);
        return connection;
    }

    /** A frame of {@code size} bytes after its prefix: a valid ApiVersions request header, then padding. */
    private ByteBuf frames(Connection connection, int... sizes) {
        ByteBuf out = connection.allocator().directBuffer();
        for (int size : sizes) {
            ByteBuffer encoded = Frames.encodeRequest(ApiMessageType.API_VERSIONS, (short) 3, ++correlationId, "test",
                new ApiVersionsRequestData().setClientSoftwareName("t").setClientSoftwareVersion("1"));
            encoded.position(encoded.position() + Frames.SIZE_PREFIX_BYTES);
            int payloadBytes = encoded.remaining();
            assertThat(size).isGreaterThanOrEqualTo(payloadBytes);
            out.writeInt(size);
            out.writeBytes(encoded);
            out.writeZero(size - payloadBytes);
        }
        return out;
    }

    private Request nextRequest() throws InterruptedException {
        Request request = requestChannel.poll(0);
        assertThat(request).as("a request in the channel").isNotNull();
        return request;
    }

    private static void answerWithoutResponse(Request request, Connection connection) {
        request.respondWithoutResponse();
        connection.channel().runPendingTasks();
    }

    private static void releaseOutbound(Connection connection) {
        Object message;
        while ((message = connection.channel().readOutbound()) != null) {
            io.netty.util.ReferenceCountUtil.release(message);
        }
    }

    @Test
    void readsAtMostOneFrameBeyondTheOneInFlight() throws Exception {
        Connection connection = connect();
        connection.send(frames(connection, FRAME_BYTES, FRAME_BYTES, FRAME_BYTES));

        // One request in the pipeline, one complete frame behind it, the third still unframed and unreserved.
        assertThat(requestChannel.size()).isEqualTo(1);
        assertThat(pool.usedBytes()).isEqualTo(2L * FRAME_BYTES);
        assertThat(connection.reading()).isFalse();

        for (int answered = 0; answered < 3; answered++) {
            Request request = nextRequest();
            assertThat(request.header().correlationId()).isEqualTo(answered + 1);
            assertThat(requestChannel.size()).isZero();
            answerWithoutResponse(request, connection);
        }
        assertThat(pool.usedBytes()).isZero();
        assertThat(connection.reading()).isTrue();
    }

    @Test
    void aFrameWhoseBytesCannotBeGrantedIsNotBufferedAndItsConnectionStopsReadingUntilMemoryIsReleased() throws Exception {
        pool = RequestMemoryPool.bounded(MAX_REQUEST_BYTES, MAX_REQUEST_BYTES);
        Connection first = connect();
        Connection second = connect();
        first.send(frames(first, MAX_REQUEST_BYTES));
        Request holder = nextRequest();
        assertThat(pool.availableBytes()).isZero();

        // The second connection's prefix and part of its frame arrive: its size is asked for, nothing is allocated for it.
        ByteBuf bytes = frames(second, FRAME_BYTES);
        second.send(bytes.readRetainedSlice(1_000));
        assertThat(pool.waitingCount()).isEqualTo(1);
        assertThat(second.reading()).isFalse();
        assertThat(second.allocator().largestAllocationBytes).as("no frame buffer before the grant").isLessThan(FRAME_BYTES);

        answerWithoutResponse(holder, first);
        second.channel().runPendingTasks();
        assertThat(pool.usedBytes()).isEqualTo(FRAME_BYTES);
        assertThat(second.reading()).isTrue();
        second.send(bytes);
        Request request = nextRequest();
        assertThat(request.connectionId()).isEqualTo(second.handler().id());
        answerWithoutResponse(request, second);
    }

    @Test
    void sizesOutsideTheLimitCloseTheConnectionBeforeAnythingIsBuffered() throws Exception {
        for (int size : new int[] {MAX_REQUEST_BYTES + 1, -1, Integer.MIN_VALUE}) {
            Connection connection = connect();
            ByteBuf bytes = connection.allocator().directBuffer(8);
            bytes.writeInt(size).writeInt(0);
            connection.send(bytes);
            assertThat(connection.channel().isOpen()).as("open after a prefix of %d", size).isFalse();
            assertThat(connection.allocator().largestAllocationBytes).isLessThan(MAX_REQUEST_BYTES);
            assertThat(pool.usedBytes()).isZero();
        }
    }

    @Test
    void aMalformedHeaderClosesTheConnectionAndReleasesItsFrames() throws Exception {
        Connection connection = connect();
        ByteBuf bytes = connection.allocator().directBuffer();
        bytes.writeInt(3).writeByte(0).writeByte(18).writeByte(0);
        ByteBuf behind = frames(connection, FRAME_BYTES);
        bytes.writeBytes(behind);
        behind.release();
        connection.send(bytes);
        assertThat(connection.channel().isOpen()).isFalse();
        assertThat(requestChannel.size()).isZero();
    }

    @Test
    void anEmptyFrameIsAMalformedRequest() throws Exception {
        Connection connection = connect();
        ByteBuf bytes = connection.allocator().directBuffer(4);
        connection.send(bytes.writeInt(0));
        assertThat(connection.channel().isOpen()).isFalse();
    }

    @Test
    void framesSplitAcrossReadsAnywhereAreReassembled() throws Exception {
        Connection connection = connect();
        ByteBuf bytes = frames(connection, 100, FRAME_BYTES, 37);
        int[] cuts = {1, 2, 1, 50, 100, 3, 2000, 1999};
        for (int cut : cuts) {
            connection.send(bytes.readRetainedSlice(Math.min(cut, bytes.readableBytes())));
            Request request = requestChannel.poll(0);
            if (request != null) {
                answerWithoutResponse(request, connection);
            }
        }
        connection.send(bytes);
        Request request;
        while ((request = requestChannel.poll(0)) != null) {
            answerWithoutResponse(request, connection);
        }
        assertThat(correlationId).isEqualTo(3);
        assertThat(connection.channel().isOpen()).isTrue();
    }

    @Test
    void aWrittenResponseReleasesTheRequest() throws Exception {
        Connection connection = connect();
        connection.send(frames(connection, FRAME_BYTES));
        Request request = nextRequest();
        request.respond(new ApiVersionsResponseData());
        Object response = connection.channel().readOutbound();
        assertThat(response).isInstanceOf(ByteBuf.class);
        io.netty.util.ReferenceCountUtil.release(response);
        releaseOutbound(connection);
    }

    @Test
    void aResponseThatCannotBeWrittenStillReleasesTheRequest() throws Exception {
        Connection connection = connect();
        connection.send(frames(connection, FRAME_BYTES, FRAME_BYTES));
        Request request = nextRequest();
        connection.channel().close();
        // The peer is gone: the complete frame behind is still processed, the write fails, both are released.
        request.respond(new ApiVersionsResponseData());
        connection.channel().runPendingTasks();
        Request next = nextRequest();
        next.respond(new ApiVersionsResponseData());
        connection.channel().runPendingTasks();
        releaseOutbound(connection);
    }

    @Test
    void closingForARequestReleasesItAndEverythingBuffered() throws Exception {
        Connection connection = connect();
        ByteBuf bytes = frames(connection, FRAME_BYTES, FRAME_BYTES, FRAME_BYTES);
        connection.send(bytes.readRetainedSlice(2 * (FRAME_BYTES + 4) + 100));
        bytes.release();
        Request request = nextRequest();
        assertThat(pool.usedBytes()).isEqualTo(2L * FRAME_BYTES);
        request.closeConnection("test");
        connection.channel().runPendingTasks();
        assertThat(connection.channel().isOpen()).isFalse();
    }

    @Test
    void anIdleCloseReleasesTheCompleteFrameTheArrivingOneAndWithdrawsTheWait() throws Exception {
        pool = RequestMemoryPool.bounded(2L * MAX_REQUEST_BYTES, MAX_REQUEST_BYTES);
        Connection busy = connect();
        Connection waiting = connect();
        ByteBuf bytes = frames(busy, MAX_REQUEST_BYTES, FRAME_BYTES, FRAME_BYTES);
        // In flight, then complete behind it, then 10 bytes of a frame being read.
        busy.send(bytes.readRetainedSlice(MAX_REQUEST_BYTES + 4 + FRAME_BYTES + 4 + 4 + 10));
        bytes.release();
        Request inFlight = nextRequest();
        waiting.send(frames(waiting, MAX_REQUEST_BYTES));
        assertThat(pool.waitingCount()).isEqualTo(1);

        busy.channel().pipeline().fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
        waiting.channel().pipeline().fireUserEventTriggered(IdleStateEvent.ALL_IDLE_STATE_EVENT);
        assertThat(pool.waitingCount()).isZero();
        assertThat(pool.usedBytes()).as("only the request in flight").isEqualTo(MAX_REQUEST_BYTES);
        answerWithoutResponse(inFlight, busy);
    }

    @Test
    void aGrantThatArrivesAfterTheConnectionClosedIsReturned() throws Exception {
        pool = RequestMemoryPool.bounded(MAX_REQUEST_BYTES, MAX_REQUEST_BYTES);
        Connection holder = connect();
        Connection waiting = connect();
        holder.send(frames(holder, MAX_REQUEST_BYTES));
        Request request = nextRequest();
        waiting.send(frames(waiting, FRAME_BYTES));
        assertThat(pool.waitingCount()).isEqualTo(1);

        // The grant is made, but the hop to the waiting connection's event loop has not run yet when it closes.
        answerWithoutResponse(request, holder);
        assertThat(pool.usedBytes()).isEqualTo(FRAME_BYTES);
        assertThat(pool.waitingCount()).isZero();
        // Closes it (the pool's cancel comes too late); EmbeddedChannel runs the pending hop while closing.
        waiting.channel().pipeline().fireExceptionCaught(new java.io.IOException("connection reset"));
        waiting.channel().runPendingTasks();
        assertThat(waiting.channel().isOpen()).isFalse();
        assertThat(pool.usedBytes()).isZero();
    }

    @Test
    void afterThePeerClosesItsCompleteRequestsAreStillProcessedAndThePartialOneIsDropped() throws Exception {
        Connection connection = connect();
        ByteBuf bytes = frames(connection, FRAME_BYTES, FRAME_BYTES, FRAME_BYTES, FRAME_BYTES);
        connection.send(bytes.readRetainedSlice(3 * (FRAME_BYTES + 4) + 100));
        bytes.release();
        // An acks=0 producer writes and closes at once.
        connection.channel().close();
        for (int expected = 1; expected <= 3; expected++) {
            Request request = nextRequest();
            assertThat(request.header().correlationId()).isEqualTo(expected);
            answerWithoutResponse(request, connection);
        }
        assertThat(requestChannel.size()).isZero();
    }

    @Test
    void afterThePeerClosesAFrameWaitingForMemoryThatCannotArriveIsWithdrawn() throws Exception {
        pool = RequestMemoryPool.bounded(MAX_REQUEST_BYTES, MAX_REQUEST_BYTES);
        Connection holder = connect();
        Connection waiting = connect();
        holder.send(frames(holder, MAX_REQUEST_BYTES));
        Request request = nextRequest();
        ByteBuf bytes = frames(waiting, FRAME_BYTES, FRAME_BYTES);
        // The first frame whole, the second cut: the first waits for memory with the rest held unframed.
        waiting.send(bytes.readRetainedSlice(FRAME_BYTES + 4 + 4 + 10));
        bytes.release();
        waiting.channel().close();
        assertThat(pool.waitingCount()).as("the first frame can still complete: it keeps waiting").isEqualTo(1);
        answerWithoutResponse(request, holder);
        waiting.channel().runPendingTasks();
        Request first = nextRequest();
        assertThat(first.connectionId()).isEqualTo(waiting.handler().id());
        answerWithoutResponse(first, waiting);
        // The second frame's prefix arrived, its bytes never will: nothing stays reserved for it.
        assertThat(pool.usedBytes()).isZero();
        assertThat(pool.waitingCount()).isZero();
    }

    @Test
    void aFullRequestChannelParksTheConnectionWithoutReadingFurther() throws Exception {
        RequestChannel small = new RequestChannel(1);
        List<Connection> parked = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            KafkaConnection handler = new KafkaConnection("PLAINTEXT", small, quotas, pool, MAX_REQUEST_BYTES, NetworkObserver.NONE);
            EmbeddedChannel channel = new EmbeddedChannel(false, false) {
                @Override
                protected SocketAddress remoteAddress0() {
                    return new InetSocketAddress("127.0.0.1", 40001);
                }
            };
            TrackingAllocator allocator = new TrackingAllocator();
            channel.config().setAllocator(allocator);
            channel.pipeline().addLast(handler);
            channel.register();
            Connection connection = new Connection(channel, handler, allocator);
            connections.add(connection);
            parked.add(connection);
            connection.send(frames(connection, FRAME_BYTES, FRAME_BYTES));
        }
        // The first connection's request fills the channel, its second frame waits behind it; the second connection's
        // first frame waits, reserved, for room in the channel, and its second is neither framed nor reserved.
        assertThat(small.size()).isEqualTo(1);
        assertThat(parked.get(1).reading()).isFalse();
        assertThat(pool.usedBytes()).isEqualTo(3L * FRAME_BYTES);

        int answered = 0;
        while (answered < 4) {
            Request request = small.poll(0);
            for (Connection connection : parked) {
                connection.channel().runPendingTasks();
            }
            if (request != null) {
                Connection owner = request.connectionId().equals(parked.get(0).handler().id()) ? parked.get(0) : parked.get(1);
                answerWithoutResponse(request, owner);
                answered++;
            }
            assertThat(answered).isLessThanOrEqualTo(4);
            if (request == null) {
                break;
            }
        }
        assertThat(answered).isEqualTo(4);
    }

    @Test
    void theLeakDetectionUsedHereReportsABufferThatWasNeverReleased() {
        LeakDetection.clear();
        leakOneBuffer();
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!LeakDetection.pollForLeaks()) {
            assertThat(System.nanoTime()).as("the leak was reported in time").isLessThan(deadline);
        }
        assertThat(LeakDetection.leaks()).isNotEmpty();
        LeakDetection.clear();
    }

    private static void leakOneBuffer() {
        ByteBuf leaked = UnpooledByteBufAllocator.DEFAULT.directBuffer(16);
        leaked.writeLong(42);
    }
}
