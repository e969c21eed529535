package io.rdmanio.core.engine;

/**
 * A snapshot of an engine's counters. Values only grow.
 *
 * @param connectionsOpened      connections established (either side)
 * @param connectionsFailed      connections that ended with an error
 * @param bytesSent              payload bytes sent
 * @param bytesReceived          payload bytes received
 * @param framesSent             frames of every type sent
 * @param creditFramesSent       credit-only frames sent
 * @param creditStalls           times a write found no credit
 * @param receiverNotReady       receiver-not-ready events (must always be zero)
 * @param protocolErrors         connections failed by a malformed or unexpected frame
 * @param inlineFramesSent       data frames sent inline, straight from the application's buffer (a subset of
 *                               {@code framesSent}; only on a fabric that offers inline sends of a whole slot)
 */
public record EngineStats(long connectionsOpened, long connectionsFailed, long bytesSent, long bytesReceived,
                          long framesSent, long creditFramesSent, long creditStalls, long receiverNotReady,
                          long protocolErrors, long inlineFramesSent) {
}
