/**
 * The box's embedded MQTT broker (aedes on 127.0.0.1), started when no
 * external broker is configured, so the box works out of the box and devices
 * on the same host can join. Retained messages are kept in memory (the device
 * registry persists itself).
 */
import net from 'node:net';
import { Aedes } from 'aedes';
import type { Logger } from '../kernel/log-types.js';
import { HomeAgentError, errorMessage } from '../kernel/errors.js';

/** A running embedded broker. */
export interface EmbeddedBroker {
  /** mqtt://127.0.0.1:<port> */
  url: string;
  port: number;
  close(): Promise<void>;
}

/**
 * Start aedes on `host:port` (port 0 picks a free one). Rejects with
 * BROKER_PORT_IN_USE when the port is taken (another broker is running there:
 * configure plugin.mqtt.url to use it instead).
 */
export async function startEmbeddedBroker(log: Logger, port = 1883, host = '127.0.0.1'): Promise<EmbeddedBroker> {
  const aedes = await Aedes.createBroker();
  aedes.on('clientError', (client, err) => log.debug({ client: client?.id, err: err.message }, 'mqtt client error'));
  aedes.on('connectionError', (_client, err) => log.debug({ err: err.message }, 'mqtt connection error'));
  const server = net.createServer(aedes.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new HomeAgentError('BROKER_PORT_IN_USE', `port ${port} on ${host} is in use (is another MQTT broker running? then set plugin.mqtt.url to it)`) : new HomeAgentError('BROKER_FAILED', `embedded broker: ${errorMessage(err)}`)),
    );
    server.listen(port, host, () => resolve());
  });
  const actual = (server.address() as net.AddressInfo).port;
  log.info({ url: `mqtt://${host}:${actual}` }, 'embedded MQTT broker (aedes) listening');
  return {
    url: `mqtt://${host}:${actual}`,
    port: actual,
    close: async () => {
      await new Promise<void>((r) => aedes.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
