// Writes transactions with a kafkajs transactional producer and reports them as JSON on stdout:
// transaction t (0 .. transactions-1) is aborted when t is odd and committed otherwise; its record
// i (0 .. perTransaction-1) goes to partition i % partitions with key and value
// "committed-<t>-<i>" or "aborted-<t>-<i>". The topic must exist.
// Usage: node transactions.js <bootstrap[,bootstrap...]> <topic> <transactionalId> <partitions> <transactions> <perTransaction>
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [bootstrap, topic, transactionalId, partitionsText, transactionsText, perTransactionText] = process.argv.slice(2);
  const partitions = parseInt(partitionsText, 10);
  const transactions = parseInt(transactionsText, 10);
  const perTransaction = parseInt(perTransactionText, 10);
  const kafka = new Kafka({ clientId: 'strata-it-kafkajs-txn', brokers: bootstrap.split(','), logLevel: logLevel.ERROR });
  const producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  let committed = 0;
  let aborted = 0;
  for (let t = 0; t < transactions; t++) {
    const commit = t % 2 === 0;
    const transaction = await producer.transaction();
    const messages = [];
    for (let i = 0; i < perTransaction; i++) {
      const value = `${commit ? 'committed' : 'aborted'}-${t}-${i}`;
      messages.push({ key: value, value, partition: i % partitions });
    }
    await transaction.send({ topic, acks: -1, messages });
    if (commit) {
      await transaction.commit();
      committed += perTransaction;
    } else {
      await transaction.abort();
      aborted += perTransaction;
    }
  }
  await producer.disconnect();
  console.log(JSON.stringify({ committed, aborted }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
