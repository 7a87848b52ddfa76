package io.strata.tools;

import io.strata.protocol.message.ApiMessageType;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the test only if the {@link TestBroker} of its class advertises every listed API (checked
 * with ApiVersions when the test is about to run). For commands whose broker handler is still
 * being written: the test is skipped until the handler lands, then runs without changes.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
@interface RequiresBrokerApi {
    ApiMessageType[] value();
}
