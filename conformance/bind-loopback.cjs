// Preloaded with `node --require` (through NODE_OPTIONS) for the conformance harness: a
// server that listens without a host binds 127.0.0.1 only, instead of every interface.
//
// The hook is net.Server.prototype._listen2 (Node's setupListenHandle), which receives the
// resolved address: null when no host was given. Rewriting there keeps listen() synchronous
// (server.address() works right after it, as the harness expects); giving listen() a host
// instead would go through an asynchronous DNS lookup. Paths, handles and explicit hosts
// are left alone.
'use strict';
const net = require('net');

const LOOPBACK = '127.0.0.1';
const setupListenHandle = net.Server.prototype._listen2;

if (typeof setupListenHandle !== 'function') {
  throw new Error('bind-loopback.cjs: net.Server.prototype._listen2 is missing in this Node');
}

net.Server.prototype._listen2 = function _listen2(address, port, addressType, backlog, fd, flags) {
  if ((address === null || address === undefined) && typeof fd !== 'number' && port >= 0) {
    return setupListenHandle.call(this, LOOPBACK, port, 4, backlog, fd, flags);
  }
  return setupListenHandle.call(this, address, port, addressType, backlog, fd, flags);
};
