/**
 * Where a caller may put the API key: the header and the query parameter.
 * Their own module, below every layer, since the access layer reads them and
 * the logger and redaction (which import nothing above them) must hide them.
 */
export const API_KEY_HEADER = "x-api-key";
export const API_KEY_QUERY_PARAMETER = "api_key";
