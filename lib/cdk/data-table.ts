import { RemovalPolicy } from 'aws-cdk-lib';
import { AttributeType, BillingMode, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import type { Construct } from 'constructs';
import { TABLE } from '#data/table';

export interface DataTableProps {
  /**
   * RETAIN for anything holding real users (the table also gets deletion protection);
   * DESTROY for throw-away development stacks.
   */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The service's single DynamoDB table, built from `data/table.ts` so that the deployed table and
 * DynamoDB Local's cannot drift. Every key attribute is a string (keys are built by `data/keys.ts`).
 *
 * Encryption uses the AWS-managed key (`aws/dynamodb`): key use is visible in CloudTrail, there is
 * no key policy to maintain and no KMS grant to add to every function role, and no key deletion can
 * make the data unreadable. A customer-managed key would be worth its cost only for cross-account
 * access or crypto-shredding, neither of which this service needs.
 */
export class DataTable extends Table {
  constructor(scope: Construct, id: string, props: DataTableProps) {
    const retain = props.removalPolicy === RemovalPolicy.RETAIN;
    super(scope, id, {
      partitionKey: { name: TABLE.partitionKey, type: AttributeType.STRING },
      sortKey: { name: TABLE.sortKey, type: AttributeType.STRING },
      timeToLiveAttribute: TABLE.ttlAttribute,
      billingMode: BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy,
      deletionProtection: retain,
    });
    for (const [indexName, index] of Object.entries(TABLE.indexes)) {
      this.addGlobalSecondaryIndex({
        indexName,
        partitionKey: { name: index.partitionKey, type: AttributeType.STRING },
        sortKey: { name: index.sortKey, type: AttributeType.STRING },
        projectionType: ProjectionType.ALL,
      });
    }
  }
}
