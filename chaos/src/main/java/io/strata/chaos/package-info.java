/**
 * The fault campaign of issue 14: a Jepsen-style harness and the checker of its histories
 * (docs/chaos-plan.md). Packages: {@code history}, {@code checker}, {@code net}, {@code cluster},
 * {@code nemesis}, {@code workload}, {@code campaign}.
 */
package io.strata.chaos;
