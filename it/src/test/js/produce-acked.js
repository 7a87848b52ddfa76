// Produces to one partition with an idempotent kafkajs producer (acks -1, one request in flight)
// until stdin is closed, one small batch at a time, and reports every acknowledged message, one
// tab-separated line each on stdout:
//   ACK  <partition> <offset> <value>   (value "<prefix>-<n>", n counting from 0 in send order)
//   DONE <messages acknowledged>
// The offset of a batch's i-th message is the batch's acknowledged base offset + i. A send that
// kafkajs gives up on (after its retries) ends the script with exit code 1: its outcome is unknown.
// Usage: node produce-acked.js <bootstrap[,bootstrap...]> <topic> <partition> <batch size> <prefix>
const { Kafka, logLevel } = require('kafkajs');

function report(...fields) {
  process.stdout.write(fields.join('\t') + '\n');
}

async function main() {
  const [bootstrap, topic, partitionText, batchText, prefix] = process.argv.slice(2);
  const partition = parseInt(partitionText, 10);
  const batchSize = parseInt(batchText, 10);
  // Retries generous enough to outlast a leader election (about 60 s in all): a killed leader's
  // partition is led again within seconds, and each retry refreshes the metadata first.
  const retry = { initialRetryTime: 100, maxRetryTime: 1000, retries: 60 };
  const kafka = new Kafka({ clientId: 'strata-it-kafkajs-acked', brokers: bootstrap.split(','), logLevel: logLevel.ERROR, retry });
  // kafkajs requires maxInFlightRequests 1 for idempotence (it keeps no per-partition sequence window).
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, retry });
  let open = true;
  process.stdin.on('end', () => { open = false; });
  process.stdin.resume();
  await producer.connect();
  let next = 0;
  while (open) {
    const messages = [];
    for (let i = 0; i < batchSize; i++) {
      messages.push({ value: `${prefix}-${next + i}`, partition });
    }
    const [metadata] = await producer.send({ topic, acks: -1, timeout: 10000, messages });
    const base = BigInt(metadata.baseOffset);
    messages.forEach((message, i) => report('ACK', metadata.partition, (base + BigInt(i)).toString(), message.value));
    next += batchSize;
  }
  await producer.disconnect();
  report('DONE', next);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
