package io.strata.server.metrics;

import io.strata.protocol.Message;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.RandomAccess;
import java.util.Set;

/**
 * Finds every error code in a response, as Kafka's {@code AbstractResponse.errorCounts()}
 * does per API by hand: the top-level error code and those of nested entries (each partition
 * of a Produce or Fetch response, each topic of a CreateTopics response...).
 *
 * <p>How: the first time a response class is seen, its public getters are inspected once and
 * turned into a {@link Plan}: the {@code short} getters whose name is {@code errorCode} or ends
 * in {@code ErrorCode}, the list getters whose element struct (transitively) holds one, and
 * the nested-struct getters that do. Plans are cached per class ({@link ClassValue}); walking
 * one calls method handles and indexes lists, with no allocation for random-access lists
 * (what the generated code builds).
 *
 * <p>Thread-safe.
 */
final class ErrorCounts {
    /** Receives each error code found. */
    interface Sink {
        void error(int apiKey, short errorCode);
    }

    private static final MethodType SHORT_GETTER = MethodType.methodType(short.class, Object.class);
    private static final MethodType OBJECT_GETTER = MethodType.methodType(Object.class, Object.class);

    private static final ClassValue<Plan> PLANS = new ClassValue<>() {
        @Override
        protected Plan computeValue(Class<?> type) {
            return planFor(type, new HashSet<>());
        }
    };

    private ErrorCounts() {
    }

    /** Reports every error code in {@code message} to {@code sink}. */
    static void count(Object message, int apiKey, Sink sink) {
        PLANS.get(message.getClass()).walk(message, apiKey, sink);
    }

    /** The error-code getters of one struct class and where to descend. */
    private record Plan(MethodHandle[] errorCodes, MethodHandle[] lists, Plan[] listElements, MethodHandle[] structs, Plan[] structPlans) {
        static final Plan EMPTY = new Plan(new MethodHandle[0], new MethodHandle[0], new Plan[0], new MethodHandle[0], new Plan[0]);

        boolean isEmpty() {
            return errorCodes.length == 0 && lists.length == 0 && structs.length == 0;
        }

        void walk(Object message, int apiKey, Sink sink) {
            try {
                for (MethodHandle getter : errorCodes) {
                    sink.error(apiKey, (short) getter.invokeExact(message));
                }
                for (int i = 0; i < lists.length; i++) {
                    List<?> list = (List<?>) (Object) lists[i].invokeExact(message);
                    if (list == null) {
                        continue;
                    }
                    Plan element = listElements[i];
                    if (list instanceof RandomAccess) {
                        for (int j = 0, size = list.size(); j < size; j++) {
                            element.walk(list.get(j), apiKey, sink);
                        }
                    } else {
                        for (Object entry : list) {
                            element.walk(entry, apiKey, sink);
                        }
                    }
                }
                for (int i = 0; i < structs.length; i++) {
                    Object nested = (Object) structs[i].invokeExact(message);
                    if (nested != null) {
                        structPlans[i].walk(nested, apiKey, sink);
                    }
                }
            } catch (RuntimeException | Error e) {
                throw e;
            } catch (Throwable e) {
                throw new IllegalStateException("reading the error codes of " + message.getClass().getName() + " failed", e);
            }
        }
    }

    private static Plan planFor(Class<?> type, Set<Class<?>> inProgress) {
        if (!inProgress.add(type)) {
            return Plan.EMPTY; // a recursive schema: its error codes are reached through the outer level
        }
        List<MethodHandle> errorCodes = new ArrayList<>();
        List<MethodHandle> lists = new ArrayList<>();
        List<Plan> listElements = new ArrayList<>();
        List<MethodHandle> structs = new ArrayList<>();
        List<Plan> structPlans = new ArrayList<>();
        MethodHandles.Lookup lookup = MethodHandles.publicLookup();
        try {
            for (Method method : type.getMethods()) {
                if (method.getParameterCount() != 0 || Modifier.isStatic(method.getModifiers()) || method.getDeclaringClass() == Object.class) {
                    continue;
                }
                String name = method.getName();
                Class<?> returned = method.getReturnType();
                if (returned == short.class && (name.equals("errorCode") || name.endsWith("ErrorCode"))) {
                    errorCodes.add(lookup.unreflect(method).asType(SHORT_GETTER));
                } else if (List.class.isAssignableFrom(returned)) {
                    Class<?> element = listElement(method.getGenericReturnType());
                    if (element != null && Message.class.isAssignableFrom(element)) {
                        Plan plan = planFor(element, inProgress);
                        if (!plan.isEmpty()) {
                            lists.add(lookup.unreflect(method).asType(OBJECT_GETTER));
                            listElements.add(plan);
                        }
                    }
                } else if (Message.class.isAssignableFrom(returned)) {
                    Plan plan = planFor(returned, inProgress);
                    if (!plan.isEmpty()) {
                        structs.add(lookup.unreflect(method).asType(OBJECT_GETTER));
                        structPlans.add(plan);
                    }
                }
            }
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot read the getters of " + type.getName(), e);
        } finally {
            inProgress.remove(type);
        }
        return new Plan(errorCodes.toArray(new MethodHandle[0]), lists.toArray(new MethodHandle[0]), listElements.toArray(new Plan[0]),
            structs.toArray(new MethodHandle[0]), structPlans.toArray(new Plan[0]));
    }

    private static Class<?> listElement(Type type) {
        if (type instanceof ParameterizedType parameterized && parameterized.getActualTypeArguments().length == 1
            && parameterized.getActualTypeArguments()[0] instanceof Class<?> element) {
            return element;
        }
        return null;
    }
}
