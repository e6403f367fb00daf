#!/usr/bin/env python3
"""A plaintext-to-TLS relay on loopback, for running a ws:// client (Autobahn's wstest) against wss://.

Usage: tls-relay.py LISTEN_PORT UPSTREAM_PORT CAFILE
Each connection to 127.0.0.1:LISTEN_PORT is opened as TLS (verified against CAFILE, name "localhost")
to 127.0.0.1:UPSTREAM_PORT and the bytes are copied both ways; a half-close is passed on as a
close_notify/FIN so closing handshakes keep their order. Prints "ready" once listening.
"""
import asyncio, ssl, sys

listen_port, upstream_port, cafile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
context = ssl.create_default_context(cafile=cafile)
context.minimum_version = ssl.TLSVersion.TLSv1_3


async def pipe(reader, writer):
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, ssl.SSLError, OSError):
        pass


async def handle(client_reader, client_writer):
    try:
        up_reader, up_writer = await asyncio.open_connection(
            "127.0.0.1", upstream_port, ssl=context, server_hostname="localhost")
    except (ConnectionError, ssl.SSLError, OSError) as error:
        print("relay: upstream failed:", error, file=sys.stderr, flush=True)
        client_writer.close()
        return
    await asyncio.gather(pipe(client_reader, up_writer), pipe(up_reader, client_writer))
    for writer in (up_writer, client_writer):
        try:
            writer.close()
        except Exception:
            pass


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", listen_port)
    print("ready", flush=True)
    async with server:
        await server.serve_forever()

asyncio.run(main())
