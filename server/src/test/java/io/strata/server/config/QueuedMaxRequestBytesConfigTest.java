package io.strata.server.config;

import io.strata.common.config.ConfigException;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class QueuedMaxRequestBytesConfigTest {
    private static final long MIB = 1024 * 1024;

    @Test
    void unsetIsAQuarterOfMaximumDirectMemoryButAtLeastOneLargestRequest() {
        assertThat(ServerConfig.defaultQueuedMaxRequestBytes(104_857_600, 1024 * MIB)).isEqualTo(256 * MIB);
        assertThat(ServerConfig.defaultQueuedMaxRequestBytes(104_857_600, 200 * MIB)).isEqualTo(104_857_600);
        long expected = ServerConfig.defaultQueuedMaxRequestBytes(104_857_600, io.netty.util.internal.PlatformDependent.maxDirectMemory());
        assertThat(ServerConfig.fromMap(Map.of()).queuedMaxRequestBytes()).isEqualTo(expected).isGreaterThanOrEqualTo(104_857_600);
    }

    @Test
    void anyValueUpToZeroMeansNoBoundAsInKafka() {
        for (String value : new String[] {"-1", "0", "-100"}) {
            assertThat(ServerConfig.fromMap(Map.of("queued.max.request.bytes", value)).queuedMaxRequestBytes()).as(value).isEqualTo(-1);
        }
    }

    @Test
    void aBoundMustHoldOneRequestOfTheLargestSize() {
        assertThat(ServerConfig.fromMap(Map.of("queued.max.request.bytes", "104857600")).queuedMaxRequestBytes()).isEqualTo(104_857_600);
        assertThat(ServerConfig.fromMap(Map.of("queued.max.request.bytes", "1000", "socket.request.max.bytes", "1000"))
            .queuedMaxRequestBytes()).isEqualTo(1000);
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("queued.max.request.bytes", "104857599")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("queued.max.request.bytes").hasMessageContaining("104857599")
            .hasMessageContaining("socket.request.max.bytes");
        assertThatThrownBy(() -> ServerConfig.fromMap(Map.of("queued.max.request.bytes", "lots")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("queued.max.request.bytes");
    }
}
