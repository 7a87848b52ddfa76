package io.strata.server.api;

import io.strata.metadata.NotControllerException;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.AlterPartitionReassignmentsRequestData;
import io.strata.protocol.message.AlterPartitionReassignmentsResponseData;
import io.strata.protocol.message.ListPartitionReassignmentsRequestData;
import io.strata.protocol.message.ListPartitionReassignmentsResponseData;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The whole-request failure answers of AlterPartitionReassignments / ListPartitionReassignments
 * in the shape of Kafka 4.4's getErrorResponse (AlterPartitionReassignmentsRequest,
 * ListPartitionReassignmentsRequest) and ApiError's message rule, and the codes a failed
 * controller call maps to.
 */
class PartitionReassignmentsHandlerTest {

    private static AlterPartitionReassignmentsRequestData alterRequest() {
        AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData().setAllowReplicationFactorChange(false);
        request.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("a").setPartitions(new ArrayList<>(List.of(
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(0).setReplicas(new ArrayList<>(List.of(1, 2))),
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(3).setReplicas(null)))));
        request.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().setName("b").setPartitions(new ArrayList<>(List.of(
            new AlterPartitionReassignmentsRequestData.ReassignablePartition().setPartitionIndex(1).setReplicas(new ArrayList<>(List.of(3)))))));
        return request;
    }

    @Test
    void aFailedAlterCarriesTheErrorAtTheTopAndOnEveryRequestedPartition() {
        AlterPartitionReassignmentsResponseData response = PartitionReassignmentsHandler.alterFailed(alterRequest(), ErrorCode.REQUEST_TIMED_OUT,
            "no active controller answered in time");
        assertThat(response.errorCode()).isEqualTo(ErrorCode.REQUEST_TIMED_OUT.code());
        assertThat(response.errorMessage()).isEqualTo("no active controller answered in time");
        assertThat(response.allowReplicationFactorChange()).isFalse();
        assertThat(response.responses()).extracting(AlterPartitionReassignmentsResponseData.ReassignableTopicResponse::name).containsExactly("a", "b");
        assertThat(response.responses().get(0).partitions())
            .extracting(AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse::partitionIndex).containsExactly(0, 3);
        for (var topic : response.responses()) {
            for (var partition : topic.partitions()) {
                assertThat(partition.errorCode()).isEqualTo(ErrorCode.REQUEST_TIMED_OUT.code());
                assertThat(partition.errorMessage()).isEqualTo("no active controller answered in time");
            }
        }
    }

    @Test
    void anUnknownServerErrorCarriesNoMessage() {
        AlterPartitionReassignmentsResponseData alter = PartitionReassignmentsHandler.alterFailed(alterRequest(), ErrorCode.UNKNOWN_SERVER_ERROR,
            "java.lang.IllegalStateException: internal detail");
        assertThat(alter.errorMessage()).isNull();
        assertThat(alter.responses().get(1).partitions().get(0).errorMessage()).isNull();
        ListPartitionReassignmentsResponseData list = PartitionReassignmentsHandler.listFailed(
            new ListPartitionReassignmentsRequestData().setTopics(null), ErrorCode.UNKNOWN_SERVER_ERROR, "internal detail");
        assertThat(list.errorCode()).isEqualTo(ErrorCode.UNKNOWN_SERVER_ERROR.code());
        assertThat(list.errorMessage()).isNull();
        assertThat(list.topics()).as("null topics: nothing to echo").isEmpty();
    }

    @Test
    void aFailedListEchoesTheRequestedPartitionsWithoutReplicas() {
        ListPartitionReassignmentsRequestData request = new ListPartitionReassignmentsRequestData().setTopics(new ArrayList<>(List.of(
            new ListPartitionReassignmentsRequestData.ListPartitionReassignmentsTopics().setName("a").setPartitionIndexes(new ArrayList<>(List.of(2, 0))))));
        ListPartitionReassignmentsResponseData response = PartitionReassignmentsHandler.listFailed(request, ErrorCode.NOT_CONTROLLER, "node 2 is not");
        assertThat(response.errorCode()).isEqualTo(ErrorCode.NOT_CONTROLLER.code());
        assertThat(response.errorMessage()).isEqualTo("node 2 is not");
        assertThat(response.topics()).hasSize(1);
        assertThat(response.topics().get(0).name()).isEqualTo("a");
        assertThat(response.topics().get(0).partitions())
            .extracting(ListPartitionReassignmentsResponseData.OngoingPartitionReassignment::partitionIndex).containsExactly(2, 0);
        assertThat(response.topics().get(0).partitions().get(0).replicas()).isEmpty();
    }

    @Test
    void aControllerDeadlineIsRequestTimedOutAndAnInactiveControllerIsNotController() {
        assertThat(ControllerErrors.of(new CompletionException(new TimeoutException("deadline")))).isEqualTo(ErrorCode.REQUEST_TIMED_OUT);
        assertThat(ControllerErrors.of(new CompletionException(new NotControllerException("not active")))).isEqualTo(ErrorCode.NOT_CONTROLLER);
        assertThat(ControllerErrors.message(new CompletionException(new TimeoutException("deadline")))).isEqualTo("deadline");
    }
}
