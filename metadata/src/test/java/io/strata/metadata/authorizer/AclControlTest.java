package io.strata.metadata.authorizer;

import io.strata.metadata.MetadataImage;
import io.strata.metadata.record.AccessControlEntryRecord;
import io.strata.metadata.record.RemoveAccessControlEntryRecord;
import io.strata.protocol.ApiMessage;
import io.strata.protocol.ErrorCode;
import io.strata.protocol.message.CreateAclsRequestData;
import io.strata.protocol.message.CreateAclsResponseData;
import io.strata.protocol.message.DeleteAclsRequestData;
import io.strata.protocol.message.DeleteAclsResponseData;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

class AclControlTest {
    private final AtomicLong ids = new AtomicLong();

    private static CreateAclsRequestData.AclCreation creation(ResourceType type, String name, PatternType pattern, String principal,
                                                               AclOperation operation, AclPermissionType permission) {
        return new CreateAclsRequestData.AclCreation().setResourceType(type.code).setResourceName(name).setResourcePatternType(pattern.code)
            .setPrincipal(principal).setHost("*").setOperation(operation.code).setPermissionType(permission.code);
    }

    private static CreateAclsRequestData.AclCreation valid(String topic) {
        return creation(ResourceType.TOPIC, topic, PatternType.LITERAL, "User:alice", AclOperation.READ, AclPermissionType.ALLOW);
    }

    private MetadataImage create(MetadataImage image, CreateAclsRequestData request, List<ErrorCode> expected) {
        AclControl.Outcome<CreateAclsResponseData> outcome = AclControl.createAcls(image.acls(), request, () -> new UUID(7, ids.incrementAndGet()));
        assertThat(outcome.response().results()).extracting(result -> ErrorCode.forCode(result.errorCode())).containsExactlyElementsOf(expected);
        return image.apply(outcome.records(), image.offset() + 1);
    }

    @Test
    void invalidCreationsAreInvalidRequestWithKafkasMessages() {
        CreateAclsRequestData request = new CreateAclsRequestData().setCreations(List.of(
            creation(ResourceType.ANY, "t", PatternType.LITERAL, "User:a", AclOperation.READ, AclPermissionType.ALLOW),
            creation(ResourceType.TOPIC, "t", PatternType.MATCH, "User:a", AclOperation.READ, AclPermissionType.ALLOW),
            creation(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:a", AclOperation.ANY, AclPermissionType.ALLOW),
            creation(ResourceType.TOPIC, "t", PatternType.LITERAL, "User:a", AclOperation.READ, AclPermissionType.ANY),
            creation(ResourceType.TOPIC, "", PatternType.LITERAL, "User:a", AclOperation.READ, AclPermissionType.ALLOW),
            creation(ResourceType.CLUSTER, "other", PatternType.LITERAL, "User:a", AclOperation.ALTER, AclPermissionType.ALLOW),
            creation(ResourceType.TOPIC, "t", PatternType.LITERAL, "alice", AclOperation.READ, AclPermissionType.ALLOW),
            new CreateAclsRequestData.AclCreation().setResourceType((byte) 99).setResourceName("t").setResourcePatternType((byte) 3)
                .setPrincipal("User:a").setHost("*").setOperation((byte) 3).setPermissionType((byte) 3),
            valid("t")));
        AclControl.Outcome<CreateAclsResponseData> outcome = AclControl.createAcls(AclIndex.EMPTY, request, () -> new UUID(1, 1));
        List<String> messages = outcome.response().results().stream().map(CreateAclsResponseData.AclCreationResult::errorMessage).toList();
        assertThat(messages).containsExactly("Invalid resourceType ANY", "Invalid patternType MATCH", "Invalid operation ANY",
            "Invalid permissionType ANY", "Resource name should not be empty", "The only valid name for the CLUSTER resource is kafka-cluster",
            "Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)",
            "Invalid resourceType UNKNOWN", null);
        assertThat(outcome.response().results().subList(0, 8)).allMatch(result -> result.errorCode() == ErrorCode.INVALID_REQUEST.code());
        assertThat(outcome.records()).hasSize(1).first().isInstanceOf(AccessControlEntryRecord.class);
    }

    @Test
    void anExistingOrRepeatedAclSucceedsWithoutANewRecord() {
        MetadataImage image = create(MetadataImage.EMPTY, new CreateAclsRequestData().setCreations(List.of(valid("t"), valid("t"))),
            List.of(ErrorCode.NONE, ErrorCode.NONE));
        assertThat(image.acls().acls()).hasSize(1);
        AclControl.Outcome<CreateAclsResponseData> again = AclControl.createAcls(image.acls(),
            new CreateAclsRequestData().setCreations(List.of(valid("t"))), () -> new UUID(9, 9));
        assertThat(again.records()).isEmpty();
        assertThat(again.response().results().get(0).errorCode()).isEqualTo(ErrorCode.NONE.code());
    }

    @Test
    void deleteRemovesEveryMatchOnceAndListsItUnderEachFilter() {
        MetadataImage image = create(MetadataImage.EMPTY, new CreateAclsRequestData().setCreations(List.of(valid("a"), valid("b"),
            creation(ResourceType.TOPIC, "p", PatternType.PREFIXED, "User:bob", AclOperation.WRITE, AclPermissionType.DENY))),
            List.of(ErrorCode.NONE, ErrorCode.NONE, ErrorCode.NONE));
        DeleteAclsRequestData request = new DeleteAclsRequestData().setFilters(List.of(
            filter(ResourceType.TOPIC, "a", PatternType.LITERAL, null),
            filter(ResourceType.ANY, null, PatternType.ANY, "User:alice"),
            filter(ResourceType.TOPIC, "payments", PatternType.MATCH, null),
            new DeleteAclsRequestData.DeleteAclsFilter().setResourceTypeFilter((byte) 2).setPatternTypeFilter((byte) 0)
                .setOperation((byte) 1).setPermissionType((byte) 1)));
        AclControl.Outcome<DeleteAclsResponseData> outcome = AclControl.deleteAcls(image.acls(), request);
        List<DeleteAclsResponseData.DeleteAclsFilterResult> results = outcome.response().filterResults();
        assertThat(results.get(0).matchingAcls()).extracting(DeleteAclsResponseData.DeleteAclsMatchingAcl::resourceName).containsExactly("a");
        assertThat(results.get(1).matchingAcls()).extracting(DeleteAclsResponseData.DeleteAclsMatchingAcl::resourceName)
            .containsExactlyInAnyOrder("a", "b");
        assertThat(results.get(2).matchingAcls()).extracting(DeleteAclsResponseData.DeleteAclsMatchingAcl::resourceName).containsExactly("p");
        assertThat(results.get(3).errorCode()).isEqualTo(ErrorCode.INVALID_REQUEST.code());
        assertThat(outcome.records()).hasSize(3).allMatch(record -> record instanceof RemoveAccessControlEntryRecord);
        assertThat(image.apply(outcome.records(), image.offset() + 1).acls().acls()).isEmpty();
    }

    @Test
    void aclsSurviveASnapshotRoundTrip() {
        MetadataImage image = create(MetadataImage.EMPTY, new CreateAclsRequestData().setCreations(List.of(valid("a"),
            creation(ResourceType.GROUP, "g", PatternType.PREFIXED, "User:*", AclOperation.ALL, AclPermissionType.DENY))),
            List.of(ErrorCode.NONE, ErrorCode.NONE));
        List<ApiMessage> records = image.toRecords();
        MetadataImage replayed = MetadataImage.EMPTY.apply(io.strata.metadata.MetadataRecords.decode(io.strata.metadata.MetadataRecords.encode(records)),
            image.offset());
        assertThat(replayed).isEqualTo(image);
        assertThat(replayed.acls().decide("User:x", "h", AclOperation.READ, ResourceType.GROUP, "gx")).isEqualTo(AclIndex.Decision.DENIED);
    }

    private static DeleteAclsRequestData.DeleteAclsFilter filter(ResourceType type, String name, PatternType pattern, String principal) {
        return new DeleteAclsRequestData.DeleteAclsFilter().setResourceTypeFilter(type.code).setResourceNameFilter(name)
            .setPatternTypeFilter(pattern.code).setPrincipalFilter(principal).setHostFilter(null).setOperation(AclOperation.ANY.code)
            .setPermissionType(AclPermissionType.ANY.code);
    }
}
