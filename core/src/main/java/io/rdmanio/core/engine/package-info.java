/**
 * The connection engine: framing, cumulative credit flow control, the buffer ring and the connection state
 * machine, over any {@link io.rdmanio.core.fabric.Fabric}. Independent of java.nio channels: the selector module
 * drives it through {@link io.rdmanio.core.engine.Engine}, {@link io.rdmanio.core.engine.Connection} and
 * {@link io.rdmanio.core.engine.Listener}.
 *
 * <p>Progress happens on the caller's thread: whoever needs readiness calls {@link io.rdmanio.core.engine.Engine#progress()}
 * (a selector in select, a blocking channel operation in {@code await}); no helper thread is on the data path.
 */
package io.rdmanio.core.engine;
