package focuscheck

// The FOCUS 1.2 tables these checks use, from the specification's column
// files (tag v1.2, specification/columns/*.md).

// columnTypes: each FOCUS 1.2 column and its data type (Content
// Constraints: Data type).
var columnTypes = map[string]string{
	"AvailabilityZone": "String", "BilledCost": "Decimal", "BillingAccountId": "String", "BillingAccountName": "String",
	"BillingAccountType": "String", "BillingCurrency": "String", "BillingPeriodEnd": "Date/Time", "BillingPeriodStart": "Date/Time",
	"CapacityReservationId": "String", "CapacityReservationStatus": "String", "ChargeCategory": "String", "ChargeClass": "String",
	"ChargeDescription": "String", "ChargeFrequency": "String", "ChargePeriodEnd": "Date/Time", "ChargePeriodStart": "Date/Time",
	"CommitmentDiscountCategory": "String", "CommitmentDiscountId": "String", "CommitmentDiscountName": "String",
	"CommitmentDiscountQuantity": "Decimal", "CommitmentDiscountStatus": "String", "CommitmentDiscountType": "String",
	"CommitmentDiscountUnit": "String", "ConsumedQuantity": "Decimal", "ConsumedUnit": "String", "ContractedCost": "Decimal",
	"ContractedUnitPrice": "Decimal", "EffectiveCost": "Decimal", "InvoiceId": "String", "InvoiceIssuerName": "String",
	"ListCost": "Decimal", "ListUnitPrice": "Decimal", "PricingCategory": "String", "PricingCurrency": "String",
	"PricingCurrencyContractedUnitPrice": "Decimal", "PricingCurrencyEffectiveCost": "Decimal", "PricingCurrencyListUnitPrice": "Decimal",
	"PricingQuantity": "Decimal", "PricingUnit": "String", "ProviderName": "String", "PublisherName": "String", "RegionId": "String",
	"RegionName": "String", "ResourceId": "String", "ResourceName": "String", "ResourceType": "String", "ServiceCategory": "String",
	"ServiceName": "String", "ServiceSubcategory": "String", "SkuId": "String", "SkuMeter": "String", "SkuPriceDetails": "JSON",
	"SkuPriceId": "String", "SubAccountId": "String", "SubAccountName": "String", "SubAccountType": "String", "Tags": "JSON",
}

// mandatory are the columns of feature level Mandatory.
var mandatory = []string{
	"BilledCost", "BillingAccountId", "BillingAccountName", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart",
	"ChargeCategory", "ChargeClass", "ChargeDescription", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost", "EffectiveCost",
	"InvoiceIssuerName", "ListCost", "PricingQuantity", "PricingUnit", "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
}

// notNull are the columns that MUST NOT be null (when present).
var notNull = []string{
	"BilledCost", "BillingAccountId", "BillingCurrency", "BillingPeriodEnd", "BillingPeriodStart", "ChargeCategory",
	"ChargeFrequency", "ChargePeriodEnd", "ChargePeriodStart", "ContractedCost", "EffectiveCost", "InvoiceIssuerName", "ListCost",
	"PricingCurrency", "PricingCurrencyEffectiveCost", "ProviderName", "PublisherName", "ServiceCategory", "ServiceName",
	"ServiceSubcategory",
}

// numericColumns have the Numeric Format.
var numericColumns = []string{
	"BilledCost", "CommitmentDiscountQuantity", "ConsumedQuantity", "ContractedCost", "ContractedUnitPrice", "EffectiveCost",
	"ListCost", "ListUnitPrice", "PricingCurrencyContractedUnitPrice", "PricingCurrencyEffectiveCost", "PricingCurrencyListUnitPrice",
	"PricingQuantity",
}

// nonNegative are the unit prices (number range: non-negative).
var nonNegative = []string{"ContractedUnitPrice", "ListUnitPrice", "PricingCurrencyContractedUnitPrice", "PricingCurrencyListUnitPrice"}

// serviceCategories are ServiceCategory's allowed values.
var serviceCategories = map[string]bool{
	"AI and Machine Learning": true, "Analytics": true, "Business Applications": true, "Compute": true, "Databases": true,
	"Developer Tools": true, "Multicloud": true, "Identity": true, "Integration": true, "Internet of Things": true,
	"Management and Governance": true, "Media": true, "Migration": true, "Mobile": true, "Networking": true, "Security": true,
	"Storage": true, "Web": true, "Other": true,
}

// serviceSubcategories are ServiceSubcategory's allowed values, each with
// its one parent ServiceCategory.
var serviceSubcategories = map[string]string{
	"AI Platforms":                          "AI and Machine Learning",
	"Bots":                                  "AI and Machine Learning",
	"Generative AI":                         "AI and Machine Learning",
	"Machine Learning":                      "AI and Machine Learning",
	"Natural Language Processing":           "AI and Machine Learning",
	"Other (AI and Machine Learning)":       "AI and Machine Learning",
	"Analytics Platforms":                   "Analytics",
	"Business Intelligence":                 "Analytics",
	"Data Processing":                       "Analytics",
	"Search":                                "Analytics",
	"Streaming Analytics":                   "Analytics",
	"Other (Analytics)":                     "Analytics",
	"Productivity and Collaboration":        "Business Applications",
	"Other (Business Applications)":         "Business Applications",
	"Containers":                            "Compute",
	"End User Computing":                    "Compute",
	"Quantum Compute":                       "Compute",
	"Serverless Compute":                    "Compute",
	"Virtual Machines":                      "Compute",
	"Other (Compute)":                       "Compute",
	"Caching":                               "Databases",
	"Data Warehouses":                       "Databases",
	"Ledger Databases":                      "Databases",
	"NoSQL Databases":                       "Databases",
	"Relational Databases":                  "Databases",
	"Time Series Databases":                 "Databases",
	"Other (Databases)":                     "Databases",
	"Developer Platforms":                   "Developer Tools",
	"Continuous Integration and Deployment": "Developer Tools",
	"Development Environments":              "Developer Tools",
	"Source Code Management":                "Developer Tools",
	"Quality Assurance":                     "Developer Tools",
	"Other (Developer Tools)":               "Developer Tools",
	"Identity and Access Management":        "Identity",
	"Other (Identity)":                      "Identity",
	"API Management":                        "Integration",
	"Messaging":                             "Integration",
	"Workflow Orchestration":                "Integration",
	"Other (Integration)":                   "Integration",
	"IoT Analytics":                         "Internet of Things",
	"IoT Platforms":                         "Internet of Things",
	"Other (Internet of Things)":            "Internet of Things",
	"Architecture":                          "Management and Governance",
	"Compliance":                            "Management and Governance",
	"Cost Management":                       "Management and Governance",
	"Data Governance":                       "Management and Governance",
	"Disaster Recovery":                     "Management and Governance",
	"Endpoint Management":                   "Management and Governance",
	"Observability":                         "Management and Governance",
	"Support":                               "Management and Governance",
	"Other (Management and Governance)":     "Management and Governance",
	"Content Creation":                      "Media",
	"Gaming":                                "Media",
	"Media Streaming":                       "Media",
	"Mixed Reality":                         "Media",
	"Other (Media)":                         "Media",
	"Data Migration":                        "Migration",
	"Resource Migration":                    "Migration",
	"Other (Migration)":                     "Migration",
	"Other (Mobile)":                        "Mobile",
	"Multicloud Integration":                "Multicloud",
	"Other (Multicloud)":                    "Multicloud",
	"Application Networking":                "Networking",
	"Content Delivery":                      "Networking",
	"Network Connectivity":                  "Networking",
	"Network Infrastructure":                "Networking",
	"Network Routing":                       "Networking",
	"Network Security":                      "Networking",
	"Other (Networking)":                    "Networking",
	"Secret Management":                     "Security",
	"Security Posture Management":           "Security",
	"Threat Detection and Response":         "Security",
	"Other (Security)":                      "Security",
	"Backup Storage":                        "Storage",
	"Block Storage":                         "Storage",
	"File Storage":                          "Storage",
	"Object Storage":                        "Storage",
	"Storage Platforms":                     "Storage",
	"Other (Storage)":                       "Storage",
	"Application Platforms":                 "Web",
	"Other (Web)":                           "Web",
	"Other (Other)":                         "Other",
}

// skuProperties are the FOCUS-defined SkuPriceDetails properties and the
// type of their values.
var skuProperties = map[string]string{
	"CoreCount": "Numeric", "DiskMaxIops": "Numeric", "DiskSpace": "Numeric", "DiskType": "String", "GpuCount": "Numeric",
	"InstanceType": "String", "InstanceSeries": "String", "MemorySize": "Numeric", "NetworkMaxIops": "Numeric",
	"NetworkMaxThroughput": "Numeric", "OperatingSystem": "String", "Redundancy": "String", "StorageClass": "String",
}

// versions are the published FOCUS versions (metadata FocusVersion).
var versions = []string{"0.5", "1.0", "1.1", "1.2"}
