package io.strata.protocol;

/** A top-level request or response body of one API. */
public interface ApiMessage extends Message {
    short apiKey();

    short lowestSupportedVersion();

    short highestSupportedVersion();
}
