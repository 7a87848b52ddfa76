// Consumes a topic as a member of a kafkajs consumer group (the classic group protocol) and
// reports, one tab-separated line each on stdout:
//   JOIN    <memberId> <partitions assigned to this member, comma-separated>   (after every rebalance)
//   RECORD  <partition> <offset> <value>
//   STOPPED <records consumed>
// Offsets are committed by kafkajs after every batch (autoCommit) and when the consumer stops.
// Usage: node consume.js <bootstrap[,bootstrap...]> <topic> <group> <count | ->
//   count: stop after that many records; "-": run until stdin is closed.
const { Kafka, logLevel } = require('kafkajs');

function report(...fields) {
  process.stdout.write(fields.join('\t') + '\n');
}

async function main() {
  const [bootstrap, topic, group, countText] = process.argv.slice(2);
  const limit = countText === '-' ? Infinity : parseInt(countText, 10);
  const kafka = new Kafka({ clientId: 'strata-it-kafkajs-consumer', brokers: bootstrap.split(','), logLevel: logLevel.ERROR });
  // Short waits so a member notices a rebalance quickly: kafkajs heartbeats between fetches.
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: 10000, rebalanceTimeout: 20000, heartbeatInterval: 500, maxWaitTimeInMs: 500 });
  let consumed = 0;
  let stop;
  const stopped = new Promise((resolve) => { stop = resolve; });

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    const partitions = (payload.memberAssignment[topic] || []).slice().sort((a, b) => a - b);
    report('JOIN', payload.memberId, partitions.join(','));
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ partition, message }) => {
      consumed++;
      report('RECORD', partition, message.offset, message.value.toString());
      if (consumed >= limit) {
        stop();
      }
    },
  });
  if (limit === Infinity) {
    process.stdin.on('end', () => stop());
    process.stdin.resume();
  }
  await stopped;
  await consumer.disconnect();
  report('STOPPED', consumed);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
