/**
 * The wire protocol of fabric connections: frame and handshake layouts as descriptor classes, and the two-counter
 * credit window that keeps every send matched by a posted receive. See {@code docs/wire-protocol.md}.
 */
package io.rdmanio.core.protocol;
