package io.strata.metadata;

/** What a dynamic configuration applies to, with the type ids of DescribeConfigs / AlterConfigs. */
public record ConfigResource(byte type, String name) {
    public static final byte TOPIC = 2;
    public static final byte BROKER = 4;
    public static final byte BROKER_LOGGER = 8;
    public static final byte CLIENT_METRICS = 16;
    public static final byte GROUP = 32;

    public static ConfigResource topic(String name) {
        return new ConfigResource(TOPIC, name);
    }

    public static ConfigResource broker(String name) {
        return new ConfigResource(BROKER, name);
    }
}
