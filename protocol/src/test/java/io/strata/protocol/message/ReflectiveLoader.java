package io.strata.protocol.message;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Loads a {@link SchemaRandomizer.StructValue} into a generated message object by calling its
 * setters, the same way for kafka-clients' classes and ours; only the leaf conversions
 * (uuid, records, raw tagged field types) differ, and those come in as functions.
 */
final class ReflectiveLoader {
    private final String topLevelClassName;
    private final Function<SchemaRandomizer.UuidValue, Object> uuid;
    private final Function<byte[], Object> records;
    private final TaggedFieldAdder taggedFieldAdder;

    interface TaggedFieldAdder {
        void add(Object message, int tag, byte[] data) throws Exception;
    }

    ReflectiveLoader(String topLevelClassName, Function<SchemaRandomizer.UuidValue, Object> uuid,
                     Function<byte[], Object> records, TaggedFieldAdder taggedFieldAdder) {
        this.topLevelClassName = topLevelClassName;
        this.uuid = uuid;
        this.records = records;
        this.taggedFieldAdder = taggedFieldAdder;
    }

    Object load(SchemaRandomizer.StructValue value) throws Exception {
        return loadStruct(Class.forName(topLevelClassName), value);
    }

    private Class<?> structClass(String name) throws ClassNotFoundException {
        Class<?> top = Class.forName(topLevelClassName);
        if (top.getSimpleName().equals(name)) {
            return top;
        }
        for (Class<?> nested : top.getDeclaredClasses()) {
            if (nested.getSimpleName().equals(name) && Modifier.isStatic(nested.getModifiers())) {
                return nested;
            }
        }
        throw new ClassNotFoundException(name + " nested in " + topLevelClassName);
    }

    private Object loadStruct(Class<?> type, SchemaRandomizer.StructValue value) throws Exception {
        Constructor<?> constructor = type.getConstructor();
        Object instance = constructor.newInstance();
        for (Map.Entry<String, Object> field : value.fields().entrySet()) {
            Method setter = setter(type, "set" + Character.toUpperCase(field.getKey().charAt(0)) + field.getKey().substring(1));
            Class<?> parameter = setter.getParameterTypes()[0];
            setter.invoke(instance, convert(field.getValue(), parameter, setter));
        }
        int index = 0;
        for (int[] unknown : value.unknownTagSizes()) {
            byte[] data = new byte[unknown[1]];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) (unknown[0] + i + index);
            }
            taggedFieldAdder.add(instance, unknown[0], data);
            index++;
        }
        return instance;
    }

    private static Method setter(Class<?> type, String name) {
        for (Method method : type.getMethods()) {
            if (method.getName().equals(name) && method.getParameterCount() == 1) {
                return method;
            }
        }
        throw new IllegalStateException("no setter " + name + " on " + type.getName());
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private Object convert(Object value, Class<?> parameter, Method setter) throws Exception {
        if (value == null) {
            return null;
        }
        if (value instanceof SchemaRandomizer.StructValue struct) {
            return loadStruct(structClass(struct.structName()), struct);
        }
        if (value instanceof SchemaRandomizer.UuidValue u) {
            return uuid.apply(u);
        }
        if (value instanceof SchemaRandomizer.RecordsValue r) {
            return records.apply(r.bytes());
        }
        if (value instanceof byte[] bytes) {
            return parameter == ByteBuffer.class ? ByteBuffer.wrap(bytes) : bytes;
        }
        if (value instanceof List<?> list) {
            Collection target;
            if (parameter.isInterface()) {
                target = new ArrayList<>();
            } else {
                target = (Collection) parameter.getConstructor().newInstance();
            }
            for (Object element : list) {
                target.add(convert(element, Object.class, setter));
            }
            return target;
        }
        return value;
    }
}
