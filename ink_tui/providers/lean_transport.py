"""A leaner network layer under httpx for plain-HTTP model servers on asyncio.

A server streams one SSE event per write, so a client that keeps up makes one network
read per event. httpcore's default backend (anyio) pays for each read with a cancel
scope, a timer for the read timeout, and a pause and a resume of the transport (two
`epoll_ctl` calls): more than the rest of the read. `LeanBackend` implements httpcore's
documented network-backend interface on a plain asyncio protocol instead: the socket is
read whenever data comes (paused only when `HIGH_WATER` bytes wait unread), and a read
takes what has arrived (up to `max_bytes`), waiting on one future when nothing has.

Only `http://` servers (a model on this machine or the local network, where events come
fastest) get it; `https://` keeps httpx's own transport, whose TLS handling is tried and
tested. Cancelling a read (an abort) closes the socket as before: httpcore closes a
connection whose response was not read to its end, and `aclose()` drops the socket at once.

A fast path (`ink_tui.fastpaths`, `lean_transport`): httpx's `AsyncHTTPTransport` is
built without its `__init__`, its methods relying on `_pool` alone, which `check()` makes
sure of; refused or switched off, the provider uses httpx's own transport. Its chunked
bodies are read by the `bulk_chunks` fast path where that one is on.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import ssl
from collections.abc import Callable, Iterable
from typing import Any, Protocol, cast

import httpcore
import httpx

from ink_tui import fastpaths


def check() -> str | None:
    for method in ("handle_async_request", "aclose"):
        names = getattr(httpx.AsyncHTTPTransport, method).__code__.co_names
        private = {name for name in names if name.startswith("_") and name != "_pool"}
        if "_pool" not in names or private:
            return f"httpx AsyncHTTPTransport.{method} uses {sorted(private) or 'no _pool'}"
    return None


# Unread bytes at which the socket stops being read (TCP then holds the server back).
HIGH_WATER = 256 * 1024
# Where `LeanPool` leaves a response's directly read body (`bulk_chunks`) for
# `fastpaths.pushed_body`: httpx hands a transport's response `extensions` on as they are.
DIRECT_BODY = "ink_direct_body"


class Diverted(Protocol):
    """Takes a connection's bytes as they arrive, instead of its reads (`pushed_body`)."""

    def data(self, data: bytes) -> None: ...

    def ended(self, error: BaseException | None) -> None: ...


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parts: list[bytes] = []
        self.size = 0
        self.eof = False
        self.error: Exception | None = None
        # Reading stops while `HIGH_WATER` bytes wait unread (`paused`) or the reader
        # asked for a rest (`held`); `reading` is what the transport was last told.
        self.paused = False
        self.held = False
        self.reading = True
        self.waiter: asyncio.Future[None] | None = None
        self.diverted: Diverted | None = None
        self._drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # Not checked with isinstance: uvloop's transports are not `asyncio.Transport`s.
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self.diverted is not None:
            self.diverted.data(data)
            return
        self.parts.append(data)
        self.size += len(data)
        if self.size >= HIGH_WATER and not self.paused:
            self.paused = True
            self.update_reading()
        self._wake()

    def divert(self, to: Diverted) -> bytes:
        """Hand every later read to `to`; returns what was read and not yet taken."""
        waiting = b"".join(self.parts)
        self.parts.clear()
        self.size = 0
        self.diverted = to
        if self.paused:
            self.paused = False
            self.update_reading()
        return waiting

    def undivert(self) -> None:
        """Reads go back to `parts`, and the socket is read again if it was held."""
        self.diverted = None
        if self.held:
            self.held = False
            self.update_reading()

    def update_reading(self) -> None:
        """Tell the transport to read, or not, as `paused` and `held` say."""
        wanted = not (self.paused or self.held)
        transport = self.transport
        if wanted == self.reading or transport is None or transport.is_closing():
            return
        self.reading = wanted
        if wanted:
            transport.resume_reading()
        else:
            transport.pause_reading()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        if self.diverted is not None:
            self.diverted.ended(None)
        return False  # close the transport: HTTP/1.1 never half-closes on purpose

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self.diverted is not None:
            self.diverted.ended(exc)
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def pause_writing(self) -> None:
        self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    async def drain(self) -> None:
        if self._drained is not None:
            await self._drained

    def _wake(self) -> None:
        waiter = self.waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class LeanStream(httpcore.AsyncNetworkStream):
    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol

    @property
    def protocol(self) -> _Protocol:
        return self._protocol

    def abort(self) -> None:
        """Drop the connection at once (a reader that stopped before the body's end)."""
        self._transport.abort()

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:  # noqa: ASYNC109
        protocol = self._protocol
        if protocol.parts:
            # Bytes already here: still let the other tasks run first, as anyio does, so
            # that the body's reader hands over what one read brought before the next.
            await asyncio.sleep(0)
        elif not protocol.eof:
            loop = asyncio.get_running_loop()
            waiter = protocol.waiter = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _time_out, waiter)
            try:
                await waiter
            except TimeoutError:
                raise httpcore.ReadTimeout("timed out reading from the server") from None
            finally:
                protocol.waiter = None
                if timer is not None:
                    timer.cancel()
        parts = protocol.parts
        if not parts:
            if protocol.error is not None:
                raise httpcore.ReadError(str(protocol.error)) from protocol.error
            return b""  # the server closed the connection
        # Up to `max_bytes`, as httpcore asks (a 64 KB read stays one batch of the body,
        # as with anyio), in whole pieces where they fit: the rest is not copied again.
        taken = 0
        count = 0
        for part in parts:
            if taken + len(part) > max_bytes:
                break
            taken += len(part)
            count += 1
        if count == 0:
            first = parts[0]
            data, parts[0] = first[:max_bytes], first[max_bytes:]
        else:
            data = parts[0] if count == 1 else b"".join(parts[:count])
            del parts[:count]
        protocol.size -= len(data)
        if protocol.paused and protocol.size < HIGH_WATER // 2:
            protocol.paused = False
            protocol.update_reading()
        return data

    def hold_reading(self, held: bool) -> None:
        """Leave the socket unread (`True`) until released (`False`): what arrives
        meanwhile waits in the kernel and is taken in one read, not a wake-up per
        write (`BodyReader` rests between a gathering consumer's batches)."""
        self._protocol.held = held
        self._protocol.update_reading()

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:  # noqa: ASYNC109
        if not buffer:
            return
        if self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(buffer)
        try:
            async with asyncio.timeout(timeout):
                await self._protocol.drain()
        except TimeoutError:
            raise httpcore.WriteTimeout("timed out writing to the server") from None

    async def aclose(self) -> None:
        # At once, as a hang-up must be: no lingering on unsent or unread bytes.
        self._transport.abort()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
    ) -> httpcore.AsyncNetworkStream:
        # Only reached through a proxy or a redirect to https; asyncio's own TLS does it.
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout("timed out starting TLS") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:
            raise httpcore.ConnectError("the connection closed while starting TLS")
        self._protocol.transport = transport
        return LeanStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":
            # An idle pooled connection with bytes or an end waiting was closed (or
            # broken) by the server: httpcore then opens a fresh one.
            return bool(self._protocol.parts) or self._protocol.eof
        names = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername"}
        if info in names:
            return self._transport.get_extra_info(names[info])
        if info == "socket":
            return self._transport.get_extra_info("socket")
        return None


class LeanBackend(httpcore.AsyncNetworkBackend):
    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        connecting = loop.create_connection(_Protocol, host, port, local_addr=local)
        transport, protocol = await _connected(connecting, timeout)
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            for option in socket_options or ():
                sock.setsockopt(*option)
        return LeanStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        transport, protocol = await _connected(
            loop.create_unix_connection(_Protocol, path), timeout
        )
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return LeanStream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def _connected(connecting: Any, limit: float | None) -> tuple[asyncio.Transport, _Protocol]:
    try:
        async with asyncio.timeout(limit):
            transport, protocol = await connecting
    except TimeoutError:
        raise httpcore.ConnectTimeout("timed out connecting to the server") from None
    except OSError as exc:
        raise httpcore.ConnectError(str(exc)) from exc
    return transport, protocol


class LeanPool(httpcore.AsyncConnectionPool):
    """httpcore's pool, whose chunked bodies are read a network read at a time
    (`bulk_chunks`): a fast stream sends one SSE event per HTTP chunk."""

    async def handle_async_request(self, request: httpcore.Request) -> httpcore.Response:
        response = await super().handle_async_request(request)
        read_directly = _direct_reader()
        if read_directly is not None:
            body = read_directly(response)
            if body is not None:
                response.extensions[DIRECT_BODY] = body
        return response


class LeanHTTPTransport(httpx.AsyncHTTPTransport):
    """httpx's own transport (request and response mapping, errors) on `LeanBackend`."""

    def __init__(self) -> None:
        # Not httpx's `__init__`: it would build an SSL context and a pool only to be
        # replaced. Its methods use nothing but `_pool`, which a test checks.
        self._pool = LeanPool(
            max_connections=100,  # httpx's default limits
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=LeanBackend(),
        )


def lean_transport(base_url: str) -> httpx.AsyncBaseTransport | None:
    """The transport for a provider at `base_url`: lean for http, None (httpx's own) else."""
    if not base_url.lower().startswith("http://") or not fastpaths.enabled("lean_transport"):
        return None
    return LeanHTTPTransport()


def _direct_reader() -> Callable[[Any], Any] | None:
    """The `bulk_chunks` fast path's reader, where it is on."""
    if not fastpaths.enabled("bulk_chunks"):
        return None
    from ink_tui.fastpaths.h11_chunks import read_chunks_directly

    return read_chunks_directly


def _time_out(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())
