package io.strata.server.security;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kafka's {@code ssl.principal.mapping.rules}: first matching rule wins, $n groups, L/U, escaped '/', commas inside rules. */
class SslPrincipalMapperTest {
    @Test
    void defaultKeepsTheDistinguishedName() {
        assertThat(SslPrincipalMapper.parse("DEFAULT").map("CN=alice,O=Example")).contains("CN=alice,O=Example");
    }

    @Test
    void rulesAreTriedInOrderAndTheFirstMatchDecides() {
        SslPrincipalMapper mapper = SslPrincipalMapper.parse(
            "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,\n RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$2/L , DEFAULT");
        assertThat(mapper.map("CN=kafka-broker,OU=ServiceUsers,O=Example")).contains("kafka-broker");
        assertThat(mapper.map("CN=Alice,OU=Sales,O=Example")).contains("alice@sales");
        assertThat(mapper.map("CN=bob,O=Example")).contains("CN=bob,O=Example");
        assertThat(SslPrincipalMapper.parse("RULE:^CN=([a-z]+).*$/$1/U").map("CN=carol,O=X")).contains("CAROL");
    }

    @Test
    void aDistinguishedNameNoRuleMatchesHasNoPrincipal() {
        assertThat(SslPrincipalMapper.parse("RULE:^CN=admin,.*$/admin/").map("CN=alice,O=X")).isEmpty();
    }

    @Test
    void anEscapedSlashBelongsToThePatternOrReplacement() {
        assertThat(SslPrincipalMapper.parse("RULE:^CN=(.*)\\/ops$/team\\/$1/").map("CN=a/ops")).contains("team/a");
    }

    @Test
    void malformedRulesAreRefusedWithTheirPosition() {
        assertThatThrownBy(() -> SslPrincipalMapper.parse("RULE:^CN=(.*)$/$1")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("not closed");
        assertThatThrownBy(() -> SslPrincipalMapper.parse("SOMETIMES")).isInstanceOf(IllegalArgumentException.class)
            .hasMessageContaining("position 0");
        assertThatThrownBy(() -> SslPrincipalMapper.parse("RULE:^(.*$/$1/X")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SslPrincipalMapper.parse(" ")).isInstanceOf(IllegalArgumentException.class);
    }
}
