package io.strata.metadata;

/** Kafka's rules for topic names. */
public final class TopicNames {
    /** Longest topic name: leaves room for the partition suffix in a 255-character directory name. */
    public static final int MAX_NAME_LENGTH = 249;

    private TopicNames() {
    }

    /** Null if the name is valid, else the reason it is not. */
    public static String validate(String name) {
        if (name == null || name.isEmpty()) {
            return "Topic name is illegal, it can't be empty";
        }
        if (name.equals(".") || name.equals("..")) {
            return "Topic name cannot be \".\" or \"..\"";
        }
        if (name.length() > MAX_NAME_LENGTH) {
            return "Topic name is illegal, it can't be longer than " + MAX_NAME_LENGTH + " characters, topic name: " + name;
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            boolean legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
            if (!legal) {
                return "Topic name \"" + name + "\" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'";
            }
        }
        return null;
    }

    /** Topics whose names differ only in '.' versus '_' collide in metric names, so Kafka refuses the second. */
    public static String unifyCollisionChars(String name) {
        return name.replace('.', '_');
    }

    public static boolean isInternal(String name) {
        return name.equals("__consumer_offsets") || name.equals("__transaction_state") || name.equals("__share_group_state");
    }
}
