package io.strata.tools.client;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class HostPortTest {
    @Test
    void parsesHostsPortsAndBracketedIpv6() {
        assertThat(HostPort.parse("127.0.0.1:9092")).isEqualTo(new HostPort("127.0.0.1", 9092));
        assertThat(HostPort.parse(" broker-1.example:19092 ")).isEqualTo(new HostPort("broker-1.example", 19092));
        assertThat(HostPort.parse("[::1]:9092")).isEqualTo(new HostPort("::1", 9092));
        assertThat(new HostPort("::1", 9092)).hasToString("[::1]:9092");
    }

    @Test
    void parsesCommaSeparatedLists() {
        assertThat(HostPort.parseList("a:1,b:2,")).containsExactly(new HostPort("a", 1), new HostPort("b", 2));
    }

    @Test
    void rejectsWhatIsNotAnAddressNamingTheInput() {
        assertThatThrownBy(() -> HostPort.parse("localhost")).hasMessage("expected host:port, got 'localhost'");
        assertThatThrownBy(() -> HostPort.parse("localhost:")).hasMessage("expected host:port, got 'localhost:'");
        assertThatThrownBy(() -> HostPort.parse("localhost:http")).hasMessage("port is not a number in 'localhost:http'");
        assertThatThrownBy(() -> HostPort.parse("localhost:70000")).hasMessage("port must be 1-65535 in 'localhost:70000'");
        assertThatThrownBy(() -> HostPort.parse("::1:9092")).hasMessageContaining("brackets");
        assertThatThrownBy(() -> HostPort.parse(":9092")).hasMessage("expected host:port, got ':9092'");
        assertThatThrownBy(() -> HostPort.parseList(" , ")).hasMessageContaining("at least one");
    }
}
