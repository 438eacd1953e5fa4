/** Secrets the test Worker runs with (never used outside tests). */
export const TEST_SECRETS = {
  ADMIN_TOKEN: "test-admin-token-0123456789",
  KEY_HASH_SECRET: "test-key-hash-secret-0123456789abcdef",
  AWS_BEDROCK_ACCESS_KEY_ID: "AKIDEXAMPLE",
  AWS_BEDROCK_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
  AWS_BEDROCK_REGION: "us-east-1",
} as const;
