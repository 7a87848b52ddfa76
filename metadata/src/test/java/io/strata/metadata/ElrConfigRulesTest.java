package io.strata.metadata;

import io.strata.metadata.record.ConfigRecord;
import io.strata.metadata.record.FeatureLevelRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@link ElrConfigRules} over hand-built images: which min.insync.replicas changes are refused, and what turning ELR on writes. */
class ElrConfigRulesTest {
    private static final String MIN_ISR = "min.insync.replicas";

    private static MetadataImage image(boolean elr, ApiMessage... configs) {
        List<ApiMessage> records = new ArrayList<>(List.of(configs));
        if (elr) {
            records.add(new FeatureLevelRecord().setName(ReplicationControl.ELR_FEATURE).setFeatureLevel((short) 1));
        }
        return MetadataImage.EMPTY.apply(records, records.size() - 1);
    }

    private static ConfigRecord config(String broker, String name, String value) {
        return new ConfigRecord().setResourceType(ConfigResource.BROKER).setResourceName(broker).setName(name).setValue(value);
    }

    @Test
    void withElrOffEveryMinIsrChangeIsAllowed() {
        MetadataImage off = image(false);
        assertThat(ElrConfigRules.refusal(off, ConfigResource.broker("1"), MIN_ISR, "2")).isNull();
        assertThat(ElrConfigRules.refusal(off, ConfigResource.broker(""), MIN_ISR, null)).isNull();
        assertThat(ElrConfigRules.clearElrRecords(off, List.of(new ControllerApi.ConfigChange(ConfigResource.broker(""), MIN_ISR, "2")))).isEmpty();
    }

    @Test
    void withElrOnOnlyTheClusterLevelAndTopicLevelValuesMayBeSet() {
        MetadataImage on = image(true, config("", MIN_ISR, "2"));
        ControllerRefusedException brokerLevel = ElrConfigRules.refusal(on, ConfigResource.broker("1"), MIN_ISR, "2");
        assertThat(brokerLevel.error()).isEqualTo(ErrorCode.INVALID_CONFIG);
        assertThat(brokerLevel.getMessage()).isEqualTo("Broker-level min.insync.replicas cannot be altered while ELR is enabled.");
        assertThat(ElrConfigRules.refusal(on, ConfigResource.broker("1"), MIN_ISR, null).getMessage()).isEqualTo(ElrConfigRules.BROKER_LEVEL_REFUSED);
        assertThat(ElrConfigRules.refusal(on, ConfigResource.broker(""), MIN_ISR, null).getMessage())
            .isEqualTo("Cluster-level min.insync.replicas cannot be removed while ELR is enabled.");
        assertThat(ElrConfigRules.refusal(on, ConfigResource.broker(""), MIN_ISR, "3")).isNull();
        assertThat(ElrConfigRules.refusal(on, ConfigResource.topic("t"), MIN_ISR, null)).isNull();
        assertThat(ElrConfigRules.refusal(on, ConfigResource.broker("1"), "num.replica.fetchers", "2")).isNull();
    }

    @Test
    void turningElrOnWritesTheClusterLevelValueAndRemovesBrokerLevelOnesInIdOrder() {
        MetadataImage off = image(false, config("10", MIN_ISR, "3"), config("2", MIN_ISR, "2"), config("2", "num.replica.fetchers", "4"),
            config("3", "num.replica.fetchers", "4"));
        List<ApiMessage> records = ElrConfigRules.safetyRecords(off, "2");
        assertThat(records).containsExactly(config("", MIN_ISR, "2"), config("2", MIN_ISR, null), config("10", MIN_ISR, null));
        MetadataImage after = off.apply(records, off.offset() + records.size());
        assertThat(after.configs(ConfigResource.broker("2"))).containsOnlyKeys("num.replica.fetchers");
        assertThat(after.configs(ConfigResource.broker("10"))).isEmpty();
        assertThat(ElrConfigRules.safetyRecords(after, "2")).as("nothing left to do").isEmpty();
    }
}
