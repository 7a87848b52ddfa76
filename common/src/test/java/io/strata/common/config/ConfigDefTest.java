package io.strata.common.config;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ConfigDefTest {
    private final ConfigDef def = new ConfigDef()
        .define("num.partitions", ConfigDef.Type.INT, 1, ConfigDef.atLeast(1), "partitions")
        .define("log.retention.ms", ConfigDef.Type.LONG, null, "retention")
        .define("listeners", ConfigDef.Type.LIST, "PLAINTEXT://127.0.0.1:9092", "listeners")
        .define("cleanup.policy", ConfigDef.Type.LIST, "delete", ConfigDef.oneOf("delete", "compact"), "policy")
        .define("auto.create.topics.enable", ConfigDef.Type.BOOLEAN, true, "auto create");

    @Test
    void defaultsApplyAndValuesParse() {
        ConfigDef.Parsed parsed = def.parse(Map.of("num.partitions", " 3 ", "cleanup.policy", "compact, delete"));
        assertThat(parsed.values()).containsEntry("num.partitions", 3)
            .containsEntry("log.retention.ms", null)
            .containsEntry("listeners", List.of("PLAINTEXT://127.0.0.1:9092"))
            .containsEntry("cleanup.policy", List.of("compact", "delete"))
            .containsEntry("auto.create.topics.enable", true);
        assertThat(parsed.unknownKeys()).isEmpty();
    }

    @Test
    void unknownKeysAreReported() {
        assertThat(def.parse(Map.of("log.retention.hourz", "5", "foo", "bar")).unknownKeys())
            .containsExactly("foo", "log.retention.hourz");
    }

    @Test
    void invalidValuesNameTheKeyAndValue() {
        assertThatThrownBy(() -> def.parse(Map.of("num.partitions", "zero")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("num.partitions").hasMessageContaining("zero");
        assertThatThrownBy(() -> def.parse(Map.of("num.partitions", "0")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("at least 1");
        assertThatThrownBy(() -> def.parse(Map.of("cleanup.policy", "shred")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("shred");
        assertThatThrownBy(() -> def.parse(Map.of("auto.create.topics.enable", "yes")))
            .isInstanceOf(ConfigException.class).hasMessageContaining("true or false");
    }
}
