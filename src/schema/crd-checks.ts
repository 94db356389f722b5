export function checkCRDSchemas(): void {}
