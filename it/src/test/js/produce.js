// Produces records with kafkajs to a Strata server and reports what the broker acknowledged.
// Usage: node produce.js <bootstrap[,bootstrap...]> <topic> <count> [partitions, default 2]
// Record i goes to partition i % partitions; the topic is created with that many partitions unless it exists.
const { Kafka, logLevel, CompressionTypes } = require('kafkajs');

async function main() {
  const [bootstrap, topic, countText, partitionsText] = process.argv.slice(2);
  const count = parseInt(countText, 10);
  const partitions = partitionsText === undefined ? 2 : parseInt(partitionsText, 10);
  const kafka = new Kafka({ clientId: 'strata-it-kafkajs', brokers: bootstrap.split(','), logLevel: logLevel.ERROR });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const batch = 100;
  for (let start = 0; start < count; start += batch) {
    const messages = [];
    for (let i = start; i < Math.min(count, start + batch); i++) {
      messages.push({ key: `key-${i}`, value: `value-${i}`, headers: { n: `${i}` }, partition: i % partitions });
    }
    await producer.send({ topic, acks: -1, messages, compression: start % 200 === 0 ? CompressionTypes.GZIP : CompressionTypes.None });
  }
  await producer.disconnect();
  const offsets = await admin.fetchTopicOffsets(topic);
  await admin.disconnect();
  const total = offsets.reduce((sum, p) => sum + parseInt(p.high, 10) - parseInt(p.low, 10), 0);
  console.log(JSON.stringify({ total, offsets }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
