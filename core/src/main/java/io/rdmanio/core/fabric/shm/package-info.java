/**
 * The {@code shm} fabric: the verbs model between processes of one host, over memory-mapped files in a shared
 * directory, UNIX domain sockets for setup, liveness and doorbells. See {@link io.rdmanio.core.fabric.shm.ShmFabric}.
 */
package io.rdmanio.core.fabric.shm;
