// A webhook receiver to copy: verifies each delivery's signature with the standardwebhooks package
// and processes each event once, however many times it is delivered (deduplicated on webhook-id).
//
//   npm install standardwebhooks
//   WEBHOOK_SECRET=whsec_... PORT=4000 node docs/webhook-receiver.mjs
//
// Then register it (an admin token; a receiver on this machine needs WEBHOOK_ALLOW_PRIVATE=true on
// the service):
//   curl -s -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
//     -d '{"url": "http://127.0.0.1:4000/finance-events", "event_types": ["*"]}' "$BASE/api/webhooks"
import http from 'node:http';
import { Webhook } from 'standardwebhooks';

const webhook = new Webhook(process.env.WEBHOOK_SECRET ?? '');
// Ids of the events already processed. A real receiver keeps them in its database, in the
// transaction that applies the event, so a crash between the two cannot apply an event twice.
const processed = new Set();

function handle(event) {
  console.log(`${event.occurred_at} ${event.type}`, JSON.stringify(event.data));
}

http
  .createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let event;
      try {
        // Checks webhook-signature against webhook-id, webhook-timestamp (within 5 minutes) and the body.
        event = webhook.verify(body, req.headers);
      } catch {
        res.writeHead(401).end();
        return;
      }
      const id = req.headers['webhook-id'];
      if (!processed.has(id)) {
        handle(event);
        processed.add(id);
      }
      // Any 2xx within 10 s is a delivery; anything else is retried later.
      res.writeHead(204).end();
    });
  })
  .listen(Number(process.env.PORT ?? 4000), '127.0.0.1', () => console.log('listening'));
