/**
 * The {@code loopback} fabric: a strict in-JVM model of RDMA verbs with deterministic fault injection, for
 * testing the connection engine. See {@link io.rdmanio.core.fabric.loopback.LoopbackFabric} for its rules.
 */
package io.rdmanio.core.fabric.loopback;
