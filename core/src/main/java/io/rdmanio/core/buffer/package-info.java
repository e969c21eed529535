/**
 * Registered memory for the engine: a pool of equal slots registered in large chunks once, carved into receive
 * rings and send staging, and the Netty buffers that lend received slots to zero-copy readers.
 */
package io.rdmanio.core.buffer;
