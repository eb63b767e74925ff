export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[];

export type Database = {
  "public": {
    Tables: {
      "api_keys": {
        Row: {
          "company_id": string;
          "created_at": string;
          "created_by": string | null;
          "id": string;
          "key_hash": string;
          "last_used_at": string | null;
          "name": string;
          "prefix": string;
          "revoked_at": string | null;
          "scopes": (string)[];
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "key_hash": string;
          "last_used_at"?: string | null;
          "name": string;
          "prefix": string;
          "revoked_at"?: string | null;
          "scopes": (string)[];
        };
        Update: {
          "company_id"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "id"?: string;
          "key_hash"?: string;
          "last_used_at"?: string | null;
          "name"?: string;
          "prefix"?: string;
          "revoked_at"?: string | null;
          "scopes"?: (string)[];
        };
        Relationships: [
          {
            foreignKeyName: "api_keys_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "cash_entries": {
        Row: {
          "amount": number;
          "company_id": string;
          "created_at": string;
          "created_by": string | null;
          "delivery_id": string | null;
          "driver_id": string;
          "id": string;
          "kind": string;
          "note": string | null;
        };
        ComputedFields: never;
        Insert: {
          "amount": number;
          "company_id": string;
          "created_at"?: string;
          "created_by"?: string | null;
          "delivery_id"?: string | null;
          "driver_id": string;
          "id"?: string;
          "kind": string;
          "note"?: string | null;
        };
        Update: {
          "amount"?: number;
          "company_id"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "delivery_id"?: string | null;
          "driver_id"?: string;
          "id"?: string;
          "kind"?: string;
          "note"?: string | null;
        };
        Relationships: [
          {
            foreignKeyName: "cash_entries_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "cash_entries_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "cash_entries_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "companies": {
        Row: {
          "created_at": string;
          "document": string | null;
          "id": string;
          "name": string;
        };
        ComputedFields: never;
        Insert: {
          "created_at"?: string;
          "document"?: string | null;
          "id"?: string;
          "name": string;
        };
        Update: {
          "created_at"?: string;
          "document"?: string | null;
          "id"?: string;
          "name"?: string;
        };
        Relationships: [];
      };
      "deliveries": {
        Row: {
          "accepted_at": string | null;
          "attempts": number;
          "cancel_reason": string | null;
          "cancelled_at": string | null;
          "collect_amount": number | null;
          "collect_change_for": number | null;
          "collect_method": string | null;
          "collected_amount": number | null;
          "collected_method": string | null;
          "company_id": string;
          "completed_at": string | null;
          "created_at": string;
          "destination_address": string;
          "destination_lat": number;
          "destination_lng": number;
          "dispatch_status": string | null;
          "distance_m": number;
          "driver_id": string | null;
          "driver_share": number;
          "duration_s": number;
          "eta_at": string | null;
          "eta_from_lat": number | null;
          "eta_from_lng": number | null;
          "eta_refreshed_at": string | null;
          "eta_requested_at": string | null;
          "external_id": string | null;
          "failed_at": string | null;
          "failure_note": string | null;
          "failure_photo_path": string | null;
          "failure_reason": string | null;
          "gateway_payment_id": string | null;
          "id": string;
          "notes": string | null;
          "origin_address": string;
          "origin_lat": number;
          "origin_lng": number;
          "payment_due_date": string | null;
          "payment_method": string;
          "payment_status": string;
          "pix_copy_paste": string | null;
          "pix_qr_code_image": string | null;
          "price": number;
          "proof_note": string | null;
          "proof_photo_path": string | null;
          "proof_signature_path": string | null;
          "recall_reason": string | null;
          "recipient_email": string | null;
          "recipient_name": string | null;
          "recipient_phone": string | null;
          "refund_requested_at": string | null;
          "remaining_m": number | null;
          "returned_at": string | null;
          "search_text": string | null;
          "service_s": number;
          "size": number;
          "started_at": string | null;
          "status": string;
          "updated_at": string;
          "window_end": string | null;
          "window_start": string | null;
        };
        ComputedFields: never;
        Insert: {
          "accepted_at"?: string | null;
          "attempts"?: number;
          "cancel_reason"?: string | null;
          "cancelled_at"?: string | null;
          "collect_amount"?: number | null;
          "collect_change_for"?: number | null;
          "collect_method"?: string | null;
          "collected_amount"?: number | null;
          "collected_method"?: string | null;
          "company_id": string;
          "completed_at"?: string | null;
          "created_at"?: string;
          "destination_address": string;
          "destination_lat": number;
          "destination_lng": number;
          "dispatch_status"?: string | null;
          "distance_m": number;
          "driver_id"?: string | null;
          "driver_share": number;
          "duration_s": number;
          "eta_at"?: string | null;
          "eta_from_lat"?: number | null;
          "eta_from_lng"?: number | null;
          "eta_refreshed_at"?: string | null;
          "eta_requested_at"?: string | null;
          "external_id"?: string | null;
          "failed_at"?: string | null;
          "failure_note"?: string | null;
          "failure_photo_path"?: string | null;
          "failure_reason"?: string | null;
          "gateway_payment_id"?: string | null;
          "id"?: string;
          "notes"?: string | null;
          "origin_address": string;
          "origin_lat": number;
          "origin_lng": number;
          "payment_due_date"?: string | null;
          "payment_method": string;
          "payment_status": string;
          "pix_copy_paste"?: string | null;
          "pix_qr_code_image"?: string | null;
          "price": number;
          "proof_note"?: string | null;
          "proof_photo_path"?: string | null;
          "proof_signature_path"?: string | null;
          "recall_reason"?: string | null;
          "recipient_email"?: string | null;
          "recipient_name"?: string | null;
          "recipient_phone"?: string | null;
          "refund_requested_at"?: string | null;
          "remaining_m"?: number | null;
          "returned_at"?: string | null;
          "search_text"?: never;
          "service_s"?: number;
          "size"?: number;
          "started_at"?: string | null;
          "status": string;
          "updated_at"?: string;
          "window_end"?: string | null;
          "window_start"?: string | null;
        };
        Update: {
          "accepted_at"?: string | null;
          "attempts"?: number;
          "cancel_reason"?: string | null;
          "cancelled_at"?: string | null;
          "collect_amount"?: number | null;
          "collect_change_for"?: number | null;
          "collect_method"?: string | null;
          "collected_amount"?: number | null;
          "collected_method"?: string | null;
          "company_id"?: string;
          "completed_at"?: string | null;
          "created_at"?: string;
          "destination_address"?: string;
          "destination_lat"?: number;
          "destination_lng"?: number;
          "dispatch_status"?: string | null;
          "distance_m"?: number;
          "driver_id"?: string | null;
          "driver_share"?: number;
          "duration_s"?: number;
          "eta_at"?: string | null;
          "eta_from_lat"?: number | null;
          "eta_from_lng"?: number | null;
          "eta_refreshed_at"?: string | null;
          "eta_requested_at"?: string | null;
          "external_id"?: string | null;
          "failed_at"?: string | null;
          "failure_note"?: string | null;
          "failure_photo_path"?: string | null;
          "failure_reason"?: string | null;
          "gateway_payment_id"?: string | null;
          "id"?: string;
          "notes"?: string | null;
          "origin_address"?: string;
          "origin_lat"?: number;
          "origin_lng"?: number;
          "payment_due_date"?: string | null;
          "payment_method"?: string;
          "payment_status"?: string;
          "pix_copy_paste"?: string | null;
          "pix_qr_code_image"?: string | null;
          "price"?: number;
          "proof_note"?: string | null;
          "proof_photo_path"?: string | null;
          "proof_signature_path"?: string | null;
          "recall_reason"?: string | null;
          "recipient_email"?: string | null;
          "recipient_name"?: string | null;
          "recipient_phone"?: string | null;
          "refund_requested_at"?: string | null;
          "remaining_m"?: number | null;
          "returned_at"?: string | null;
          "search_text"?: never;
          "service_s"?: number;
          "size"?: number;
          "started_at"?: string | null;
          "status"?: string;
          "updated_at"?: string;
          "window_end"?: string | null;
          "window_start"?: string | null;
        };
        Relationships: [
          {
            foreignKeyName: "deliveries_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "deliveries_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "delivery_history": {
        Row: {
          "actor_id": string | null;
          "changes": Json | null;
          "company_id": string;
          "created_at": string;
          "delivery_id": string;
          "from_payment_status": string | null;
          "from_status": string | null;
          "id": number;
          "to_payment_status": string;
          "to_status": string;
          "trigger": string;
        };
        ComputedFields: never;
        Insert: {
          "actor_id"?: string | null;
          "changes"?: Json | null;
          "company_id": string;
          "created_at"?: string;
          "delivery_id": string;
          "from_payment_status"?: string | null;
          "from_status"?: string | null;
          "id"?: never;
          "to_payment_status": string;
          "to_status": string;
          "trigger": string;
        };
        Update: {
          "actor_id"?: string | null;
          "changes"?: Json | null;
          "company_id"?: string;
          "created_at"?: string;
          "delivery_id"?: string;
          "from_payment_status"?: string | null;
          "from_status"?: string | null;
          "id"?: never;
          "to_payment_status"?: string;
          "to_status"?: string;
          "trigger"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "delivery_history_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "delivery_history_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
        ];
      };
      "delivery_trail_points": {
        Row: {
          "company_id": string;
          "delivery_id": string;
          "lat": number;
          "lng": number;
          "recorded_at": string;
          "seq": number;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "delivery_id": string;
          "lat": number;
          "lng": number;
          "recorded_at": string;
          "seq": number;
        };
        Update: {
          "company_id"?: string;
          "delivery_id"?: string;
          "lat"?: number;
          "lng"?: number;
          "recorded_at"?: string;
          "seq"?: number;
        };
        Relationships: [
          {
            foreignKeyName: "delivery_trail_points_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
        ];
      };
      "dispatch_offers": {
        Row: {
          "attempt": number;
          "company_id": string;
          "decided_at": string | null;
          "delivery_id": string;
          "driver_id": string;
          "expires_at": string;
          "id": string;
          "offered_at": string;
          "outcome": string | null;
          "round": number;
        };
        ComputedFields: never;
        Insert: {
          "attempt": number;
          "company_id": string;
          "decided_at"?: string | null;
          "delivery_id": string;
          "driver_id": string;
          "expires_at": string;
          "id"?: string;
          "offered_at"?: string;
          "outcome"?: string | null;
          "round": number;
        };
        Update: {
          "attempt"?: number;
          "company_id"?: string;
          "decided_at"?: string | null;
          "delivery_id"?: string;
          "driver_id"?: string;
          "expires_at"?: string;
          "id"?: string;
          "offered_at"?: string;
          "outcome"?: string | null;
          "round"?: number;
        };
        Relationships: [
          {
            foreignKeyName: "dispatch_offers_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "dispatch_offers_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "dispatch_rounds": {
        Row: {
          "attempt": number;
          "candidates": (Database["public"]["CompositeTypes"]["dispatch_candidate"])[];
          "company_id": string;
          "created_at": string;
          "delivery_id": string;
          "driver_id": string | null;
          "id": number;
          "mode": string;
          "outcome": string;
          "ranked_by": string | null;
          "round": number;
          "routing_error": string | null;
        };
        ComputedFields: never;
        Insert: {
          "attempt": number;
          "candidates": (Database["public"]["CompositeTypes"]["dispatch_candidate"])[];
          "company_id": string;
          "created_at"?: string;
          "delivery_id": string;
          "driver_id"?: string | null;
          "id"?: never;
          "mode": string;
          "outcome": string;
          "ranked_by"?: string | null;
          "round": number;
          "routing_error"?: string | null;
        };
        Update: {
          "attempt"?: number;
          "candidates"?: (Database["public"]["CompositeTypes"]["dispatch_candidate"])[];
          "company_id"?: string;
          "created_at"?: string;
          "delivery_id"?: string;
          "driver_id"?: string | null;
          "id"?: never;
          "mode"?: string;
          "outcome"?: string;
          "ranked_by"?: string | null;
          "round"?: number;
          "routing_error"?: string | null;
        };
        Relationships: [
          {
            foreignKeyName: "dispatch_rounds_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "dispatch_rounds_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "dispatch_settings": {
        Row: {
          "company_id": string;
          "max_active_per_driver": number;
          "max_distance_km": number;
          "mode": string;
          "offer_batch": number;
          "offer_timeout_s": number;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "max_active_per_driver"?: number;
          "max_distance_km"?: number;
          "mode"?: string;
          "offer_batch"?: number;
          "offer_timeout_s"?: number;
          "updated_at"?: string;
        };
        Update: {
          "company_id"?: string;
          "max_active_per_driver"?: number;
          "max_distance_km"?: number;
          "mode"?: string;
          "offer_batch"?: number;
          "offer_timeout_s"?: number;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "dispatch_settings_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: true;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "driver_locations": {
        Row: {
          "accuracy": number | null;
          "company_id": string;
          "driver_id": string;
          "heading": number | null;
          "lat": number;
          "lng": number;
          "speed": number | null;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "accuracy"?: number | null;
          "company_id": string;
          "driver_id": string;
          "heading"?: number | null;
          "lat": number;
          "lng": number;
          "speed"?: number | null;
          "updated_at"?: string;
        };
        Update: {
          "accuracy"?: number | null;
          "company_id"?: string;
          "driver_id"?: string;
          "heading"?: number | null;
          "lat"?: number;
          "lng"?: number;
          "speed"?: number | null;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "driver_locations_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "driver_locations_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: true;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "drivers": {
        Row: {
          "active": boolean;
          "company_id": string;
          "created_at": string;
          "email": string;
          "id": string;
          "name": string;
          "phone": string | null;
          "updated_at": string;
          "user_id": string;
          "vehicle_capacity": number | null;
          "vehicle_plate": string | null;
          "vehicle_type": string;
        };
        ComputedFields: never;
        Insert: {
          "active"?: boolean;
          "company_id": string;
          "created_at"?: string;
          "email": string;
          "id"?: string;
          "name": string;
          "phone"?: string | null;
          "updated_at"?: string;
          "user_id": string;
          "vehicle_capacity"?: number | null;
          "vehicle_plate"?: string | null;
          "vehicle_type"?: string;
        };
        Update: {
          "active"?: boolean;
          "company_id"?: string;
          "created_at"?: string;
          "email"?: string;
          "id"?: string;
          "name"?: string;
          "phone"?: string | null;
          "updated_at"?: string;
          "user_id"?: string;
          "vehicle_capacity"?: number | null;
          "vehicle_plate"?: string | null;
          "vehicle_type"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "drivers_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "imports": {
        Row: {
          "company_id": string;
          "created": number;
          "created_at": string;
          "created_by": string | null;
          "errors": NonNullable<Json>;
          "failed_attempts": number;
          "failure": string | null;
          "id": string;
          "leased_until": string | null;
          "next_ordinal": number;
          "processed": number;
          "skipped": number;
          "status": string;
          "total": number;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "created"?: number;
          "created_at"?: string;
          "created_by"?: string | null;
          "errors"?: NonNullable<Json>;
          "failed_attempts"?: number;
          "failure"?: string | null;
          "id"?: string;
          "leased_until"?: string | null;
          "next_ordinal"?: number;
          "processed"?: number;
          "skipped"?: number;
          "status"?: string;
          "total": number;
          "updated_at"?: string;
        };
        Update: {
          "company_id"?: string;
          "created"?: number;
          "created_at"?: string;
          "created_by"?: string | null;
          "errors"?: NonNullable<Json>;
          "failed_attempts"?: number;
          "failure"?: string | null;
          "id"?: string;
          "leased_until"?: string | null;
          "next_ordinal"?: number;
          "processed"?: number;
          "skipped"?: number;
          "status"?: string;
          "total"?: number;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "imports_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "memberships": {
        Row: {
          "company_id": string;
          "created_at": string;
          "role": string;
          "user_id": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "created_at"?: string;
          "role": string;
          "user_id": string;
        };
        Update: {
          "company_id"?: string;
          "created_at"?: string;
          "role"?: string;
          "user_id"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "memberships_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "notification_settings": {
        Row: {
          "channels": (string)[];
          "company_id": string;
          "events": (string)[];
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "channels"?: (string)[];
          "company_id": string;
          "events"?: (string)[];
          "updated_at"?: string;
        };
        Update: {
          "channels"?: (string)[];
          "company_id"?: string;
          "events"?: (string)[];
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "notification_settings_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: true;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "notifications": {
        Row: {
          "attempts": number;
          "channel": string;
          "company_id": string;
          "created_at": string;
          "delivery_id": string;
          "error": string | null;
          "event": string;
          "id": string;
          "last_attempt_at": string | null;
          "next_attempt_at": string;
          "provider_message_id": string | null;
          "sent_at": string | null;
          "status": string;
        };
        ComputedFields: never;
        Insert: {
          "attempts"?: number;
          "channel": string;
          "company_id": string;
          "created_at"?: string;
          "delivery_id": string;
          "error"?: string | null;
          "event": string;
          "id"?: string;
          "last_attempt_at"?: string | null;
          "next_attempt_at"?: string;
          "provider_message_id"?: string | null;
          "sent_at"?: string | null;
          "status"?: string;
        };
        Update: {
          "attempts"?: number;
          "channel"?: string;
          "company_id"?: string;
          "created_at"?: string;
          "delivery_id"?: string;
          "error"?: string | null;
          "event"?: string;
          "id"?: string;
          "last_attempt_at"?: string | null;
          "next_attempt_at"?: string;
          "provider_message_id"?: string | null;
          "sent_at"?: string | null;
          "status"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "notifications_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "notifications_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
        ];
      };
      "prices": {
        Row: {
          "base_fee": number;
          "company_id": string;
          "driver_share": number;
          "minimum_fee": number;
          "per_km": number;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "base_fee": number;
          "company_id": string;
          "driver_share": number;
          "minimum_fee": number;
          "per_km": number;
          "updated_at"?: string;
        };
        Update: {
          "base_fee"?: number;
          "company_id"?: string;
          "driver_share"?: number;
          "minimum_fee"?: number;
          "per_km"?: number;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "prices_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: true;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "proof_requirements": {
        Row: {
          "company_id": string;
          "handover_code": boolean;
          "note": boolean;
          "photo": boolean;
          "signature": boolean;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "handover_code"?: boolean;
          "note"?: boolean;
          "photo"?: boolean;
          "signature"?: boolean;
          "updated_at"?: string;
        };
        Update: {
          "company_id"?: string;
          "handover_code"?: boolean;
          "note"?: boolean;
          "photo"?: boolean;
          "signature"?: boolean;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "proof_requirements_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: true;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "push_subscriptions": {
        Row: {
          "auth": string;
          "company_id": string;
          "created_at": string;
          "driver_id": string;
          "endpoint": string;
          "id": string;
          "last_sent_at": string | null;
          "p256dh": string;
          "updated_at": string;
          "user_agent": string | null;
        };
        ComputedFields: never;
        Insert: {
          "auth": string;
          "company_id": string;
          "created_at"?: string;
          "driver_id": string;
          "endpoint": string;
          "id"?: string;
          "last_sent_at"?: string | null;
          "p256dh": string;
          "updated_at"?: string;
          "user_agent"?: string | null;
        };
        Update: {
          "auth"?: string;
          "company_id"?: string;
          "created_at"?: string;
          "driver_id"?: string;
          "endpoint"?: string;
          "id"?: string;
          "last_sent_at"?: string | null;
          "p256dh"?: string;
          "updated_at"?: string;
          "user_agent"?: string | null;
        };
        Relationships: [
          {
            foreignKeyName: "push_subscriptions_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "push_subscriptions_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "route_plans": {
        Row: {
          "company_id": string;
          "created_at": string;
          "created_by": string | null;
          "error": string | null;
          "id": string;
          "lease_until": string;
          "progress": number;
          "request": NonNullable<Json>;
          "result": Json | null;
          "status": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "created_at"?: string;
          "created_by"?: string | null;
          "error"?: string | null;
          "id"?: string;
          "lease_until"?: string;
          "progress"?: number;
          "request": NonNullable<Json>;
          "result"?: Json | null;
          "status"?: string;
          "updated_at"?: string;
        };
        Update: {
          "company_id"?: string;
          "created_at"?: string;
          "created_by"?: string | null;
          "error"?: string | null;
          "id"?: string;
          "lease_until"?: string;
          "progress"?: number;
          "request"?: NonNullable<Json>;
          "result"?: Json | null;
          "status"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "route_plans_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "route_stops": {
        Row: {
          "arrival_at": string | null;
          "company_id": string;
          "delivery_id": string;
          "kind": string;
          "live": boolean;
          "route_id": string;
          "seq": number;
          "status": string;
        };
        ComputedFields: never;
        Insert: {
          "arrival_at"?: string | null;
          "company_id": string;
          "delivery_id": string;
          "kind": string;
          "live"?: boolean;
          "route_id": string;
          "seq": number;
          "status"?: string;
        };
        Update: {
          "arrival_at"?: string | null;
          "company_id"?: string;
          "delivery_id"?: string;
          "kind"?: string;
          "live"?: boolean;
          "route_id"?: string;
          "seq"?: number;
          "status"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "route_stops_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "route_stops_route_id_fkey";
            columns: ["route_id"];
            isOneToOne: false;
            referencedRelation: "routes";
            referencedColumns: ["id"];
          },
        ];
      };
      "routes": {
        Row: {
          "cancelled_at": string | null;
          "capacity": number;
          "company_id": string;
          "completed_at": string | null;
          "created_at": string;
          "distance_m": number;
          "driver_id": string;
          "duration_s": number;
          "end_lat": number | null;
          "end_lng": number | null;
          "ends_at": string;
          "engine": string;
          "id": string;
          "published_at": string | null;
          "shift_end": string;
          "start_lat": number;
          "start_lng": number;
          "starts_at": string;
          "status": string;
          "timed_from_lat": number | null;
          "timed_from_lng": number | null;
          "timing_requested_at": string | null;
          "updated_at": string;
          "violations": NonNullable<Json>;
        };
        ComputedFields: never;
        Insert: {
          "cancelled_at"?: string | null;
          "capacity": number;
          "company_id": string;
          "completed_at"?: string | null;
          "created_at"?: string;
          "distance_m"?: number;
          "driver_id": string;
          "duration_s"?: number;
          "end_lat"?: number | null;
          "end_lng"?: number | null;
          "ends_at": string;
          "engine": string;
          "id"?: string;
          "published_at"?: string | null;
          "shift_end": string;
          "start_lat": number;
          "start_lng": number;
          "starts_at": string;
          "status"?: string;
          "timed_from_lat"?: number | null;
          "timed_from_lng"?: number | null;
          "timing_requested_at"?: string | null;
          "updated_at"?: string;
          "violations"?: NonNullable<Json>;
        };
        Update: {
          "cancelled_at"?: string | null;
          "capacity"?: number;
          "company_id"?: string;
          "completed_at"?: string | null;
          "created_at"?: string;
          "distance_m"?: number;
          "driver_id"?: string;
          "duration_s"?: number;
          "end_lat"?: number | null;
          "end_lng"?: number | null;
          "ends_at"?: string;
          "engine"?: string;
          "id"?: string;
          "published_at"?: string | null;
          "shift_end"?: string;
          "start_lat"?: number;
          "start_lng"?: number;
          "starts_at"?: string;
          "status"?: string;
          "timed_from_lat"?: number | null;
          "timed_from_lng"?: number | null;
          "timing_requested_at"?: string | null;
          "updated_at"?: string;
          "violations"?: NonNullable<Json>;
        };
        Relationships: [
          {
            foreignKeyName: "routes_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "routes_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
      "subscriptions": {
        Row: {
          "company_id": string;
          "current_period_end": string | null;
          "plan": string;
          "status": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "current_period_end"?: string | null;
          "plan"?: string;
          "status"?: string;
          "updated_at"?: string;
        };
        Update: {
          "company_id"?: string;
          "current_period_end"?: string | null;
          "plan"?: string;
          "status"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "subscriptions_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: true;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "wallet_entries": {
        Row: {
          "amount": number;
          "company_id": string;
          "created_at": string;
          "delivery_id": string | null;
          "driver_id": string;
          "id": string;
          "kind": string;
          "withdrawal_id": string | null;
        };
        ComputedFields: never;
        Insert: {
          "amount": number;
          "company_id": string;
          "created_at"?: string;
          "delivery_id"?: string | null;
          "driver_id": string;
          "id"?: string;
          "kind": string;
          "withdrawal_id"?: string | null;
        };
        Update: {
          "amount"?: number;
          "company_id"?: string;
          "created_at"?: string;
          "delivery_id"?: string | null;
          "driver_id"?: string;
          "id"?: string;
          "kind"?: string;
          "withdrawal_id"?: string | null;
        };
        Relationships: [
          {
            foreignKeyName: "wallet_entries_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "wallet_entries_delivery_id_fkey";
            columns: ["delivery_id"];
            isOneToOne: false;
            referencedRelation: "deliveries";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "wallet_entries_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "wallet_entries_withdrawal_id_fkey";
            columns: ["withdrawal_id"];
            isOneToOne: false;
            referencedRelation: "withdrawals";
            referencedColumns: ["id"];
          },
        ];
      };
      "webhook_endpoints": {
        Row: {
          "company_id": string;
          "created_at": string;
          "description": string | null;
          "disabled_reason": string | null;
          "enabled": boolean;
          "events": (string)[];
          "failing_since": string | null;
          "id": string;
          "owner_notice_claimed_at": string | null;
          "owner_notified_at": string | null;
          "updated_at": string;
          "url": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id": string;
          "created_at"?: string;
          "description"?: string | null;
          "disabled_reason"?: string | null;
          "enabled"?: boolean;
          "events": (string)[];
          "failing_since"?: string | null;
          "id"?: string;
          "owner_notice_claimed_at"?: string | null;
          "owner_notified_at"?: string | null;
          "updated_at"?: string;
          "url": string;
        };
        Update: {
          "company_id"?: string;
          "created_at"?: string;
          "description"?: string | null;
          "disabled_reason"?: string | null;
          "enabled"?: boolean;
          "events"?: (string)[];
          "failing_since"?: string | null;
          "id"?: string;
          "owner_notice_claimed_at"?: string | null;
          "owner_notified_at"?: string | null;
          "updated_at"?: string;
          "url"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "webhook_endpoints_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "webhook_events": {
        Row: {
          "company_id": string | null;
          "detail": string | null;
          "event": string | null;
          "id": string;
          "object_id": string | null;
          "received_at": string;
          "result": string;
        };
        ComputedFields: never;
        Insert: {
          "company_id"?: string | null;
          "detail"?: string | null;
          "event"?: string | null;
          "id"?: string;
          "object_id"?: string | null;
          "received_at"?: string;
          "result": string;
        };
        Update: {
          "company_id"?: string | null;
          "detail"?: string | null;
          "event"?: string | null;
          "id"?: string;
          "object_id"?: string | null;
          "received_at"?: string;
          "result"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "webhook_events_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
        ];
      };
      "withdrawals": {
        Row: {
          "amount": number;
          "company_id": string;
          "completed_at": string | null;
          "created_at": string;
          "driver_id": string;
          "error_message": string | null;
          "failure_kind": string | null;
          "gateway_transfer_id": string | null;
          "id": string;
          "in_doubt": boolean;
          "pix_key": string;
          "pix_key_type": string;
          "status": string;
          "updated_at": string;
        };
        ComputedFields: never;
        Insert: {
          "amount": number;
          "company_id": string;
          "completed_at"?: string | null;
          "created_at"?: string;
          "driver_id": string;
          "error_message"?: string | null;
          "failure_kind"?: string | null;
          "gateway_transfer_id"?: string | null;
          "id"?: string;
          "in_doubt"?: boolean;
          "pix_key": string;
          "pix_key_type": string;
          "status"?: string;
          "updated_at"?: string;
        };
        Update: {
          "amount"?: number;
          "company_id"?: string;
          "completed_at"?: string | null;
          "created_at"?: string;
          "driver_id"?: string;
          "error_message"?: string | null;
          "failure_kind"?: string | null;
          "gateway_transfer_id"?: string | null;
          "id"?: string;
          "in_doubt"?: boolean;
          "pix_key"?: string;
          "pix_key_type"?: string;
          "status"?: string;
          "updated_at"?: string;
        };
        Relationships: [
          {
            foreignKeyName: "withdrawals_company_id_fkey";
            columns: ["company_id"];
            isOneToOne: false;
            referencedRelation: "companies";
            referencedColumns: ["id"];
          },
          {
            foreignKeyName: "withdrawals_driver_id_fkey";
            columns: ["driver_id"];
            isOneToOne: false;
            referencedRelation: "drivers";
            referencedColumns: ["id"];
          },
        ];
      };
    };
    Views: {
      [_ in never]: never;
    };
    Functions: {
      "accept_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "apply_payment_event": {
        Args: { "company_id": string; "event": string; "external_reference": string; "payment_id": string };
        Returns: Json;
      };
      "apply_transfer_event": {
        Args: { "company_id": string; "event": string; "external_reference": string; "transfer_id": string };
        Returns: Json;
      };
      "assign_delivery": {
        Args: { "delivery_id": string; "driver_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "attach_transfer": {
        Args: { "gateway_transfer_id": string; "withdrawal_id": string };
        Returns: Database["public"]["CompositeTypes"]["withdrawal"];
        SetofOptions: {
          from: "*";
          to: "withdrawal";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "authorize_new_delivery": { Args: { "driver_id"?: string; "external_id"?: string }; Returns: string };
      "cancel_delivery": {
        Args: { "delivery_id": string; "reason"?: string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "cancel_route": {
        Args: { "route_id": string };
        Returns: Database["public"]["CompositeTypes"]["route"];
        SetofOptions: {
          from: "*";
          to: "route";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "cash_summary": {
        Args: { "day": string };
        Returns: Database["public"]["CompositeTypes"]["cash_summary"];
        SetofOptions: {
          from: "*";
          to: "cash_summary";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "claim_dispatches": { Args: { "batch"?: number }; Returns: Json };
      "claim_import_batch": { Args: { "batch_size": number; "lease_seconds": number }; Returns: Json };
      "claim_notifications": { Args: { "batch"?: number }; Returns: Json };
      "claim_push_messages": { Args: { "batch"?: number }; Returns: Json };
      "claim_webhook_deliveries": { Args: { "batch"?: number }; Returns: Json };
      "complete_delivery": {
        Args: { "collected_amount"?: number; "collected_method"?: string; "delivery_id": string; "note"?: string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "complete_delivery_override": {
        Args: { "collected_amount"?: number; "collected_method"?: string; "delivery_id": string; "reason": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "complete_dispatch": {
        Args: { "claim": string; "delivery_id": string; "durations"?: Json; "routing_error"?: string };
        Returns: Json;
      };
      "complete_route_insertion": {
        Args: { "added_s"?: number; "claim": string; "delivery_id": string; "route_id"?: string; "stops"?: Json };
        Returns: Json;
      };
      "create_api_key": {
        Args: { "key_hash": string; "name": string; "prefix": string; "scopes": (string)[] };
        Returns: Database["public"]["CompositeTypes"]["api_key"];
        SetofOptions: {
          from: "*";
          to: "api_key";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "create_delivery": {
        Args: {
          "charged_price"?: number;
          "collect_amount"?: number;
          "collect_change_for"?: number;
          "collect_method"?: string;
          "company_id": string;
          "created_by": string;
          "destination_address": string;
          "destination_lat": number;
          "destination_lng": number;
          "distance_m": number;
          "driver_id"?: string;
          "duration_s": number;
          "external_id"?: string;
          "gateway_payment_id"?: string;
          "id": string;
          "notes"?: string;
          "origin_address": string;
          "origin_lat": number;
          "origin_lng": number;
          "payment_due_date"?: string;
          "payment_method": string;
          "pix_copy_paste"?: string;
          "pix_qr_code_image"?: string;
          "recipient_email"?: string;
          "recipient_name"?: string;
          "recipient_phone"?: string;
          "window_end"?: string;
          "window_start"?: string;
        };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "create_driver": {
        Args: { "company_id": string; "email": string; "name": string; "phone"?: string; "user_id": string };
        Returns: Database["public"]["CompositeTypes"]["driver"];
        SetofOptions: {
          from: "*";
          to: "driver";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "create_routes": {
        Args: { "engine": string; "routes": Json };
        Returns: (Database["public"]["CompositeTypes"]["route"])[];
      };
      "create_webhook_endpoint": {
        Args: { "description"?: string; "events": (string)[]; "secret_ciphertext": string; "url": string };
        Returns: Database["public"]["CompositeTypes"]["webhook_endpoint"];
        SetofOptions: {
          from: "*";
          to: "webhook_endpoint";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "custom_access_token_hook": { Args: { "event": Json }; Returns: Json };
      "decline_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "delete_push_subscription": { Args: { "subscription_id": string }; Returns: undefined };
      "delete_webhook_endpoint": { Args: { "endpoint_id": string }; Returns: undefined };
      "driver_day": {
        Args: { "day": string; "driver_id": string };
        Returns: Database["public"]["CompositeTypes"]["driver_day"];
        SetofOptions: {
          from: "*";
          to: "driver_day";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "editable_delivery": {
        Args: { "delivery_id": string; "moves_ends"?: boolean };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "erase_delivery_recipient": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "existing_external_ids": { Args: { "external_ids": (string)[] }; Returns: (string)[] };
      "export_deliveries": {
        Args: {
          "created_from"?: string;
          "created_to"?: string;
          "driver_id"?: string;
          "late"?: boolean;
          "payment_status"?: string;
          "q"?: string;
          "status"?: string;
        };
        Returns: unknown;
      };
      "fail_delivery": {
        Args: { "delivery_id": string; "note"?: string; "reason": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "fail_import_batch": {
        Args: { "failure": string; "from_ordinal": number; "import_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery_import"];
        SetofOptions: {
          from: "*";
          to: "delivery_import";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "fail_withdrawal": {
        Args: { "error_message": string; "failure_kind": string; "withdrawal_id": string };
        Returns: Database["public"]["CompositeTypes"]["withdrawal"];
        SetofOptions: {
          from: "*";
          to: "withdrawal";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "fetch_deliveries": {
        Args: { "count": number; "cursor": unknown };
        Returns: (Database["public"]["CompositeTypes"]["delivery"])[];
      };
      "get_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_delivery_dispatch": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery_dispatch"];
        SetofOptions: {
          from: "*";
          to: "delivery_dispatch";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_delivery_trail": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery_trail"];
        SetofOptions: {
          from: "*";
          to: "delivery_trail";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_dispatch_settings": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["dispatch_settings_set"];
        SetofOptions: {
          from: "*";
          to: "dispatch_settings_set";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_driver": {
        Args: { "driver_id": string };
        Returns: Database["public"]["CompositeTypes"]["driver"];
        SetofOptions: {
          from: "*";
          to: "driver";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_driver_cash": {
        Args: { "driver_id": string; "entries_limit"?: number };
        Returns: Database["public"]["CompositeTypes"]["driver_cash"];
        SetofOptions: {
          from: "*";
          to: "driver_cash";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_import": {
        Args: { "import_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery_import"];
        SetofOptions: {
          from: "*";
          to: "delivery_import";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_my_company": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["company"];
        SetofOptions: {
          from: "*";
          to: "company";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_notification_settings": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["notification_settings_set"];
        SetofOptions: {
          from: "*";
          to: "notification_settings_set";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_prices": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["price_table"];
        SetofOptions: {
          from: "*";
          to: "price_table";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_proof_requirements": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["proof_requirements_set"];
        SetofOptions: {
          from: "*";
          to: "proof_requirements_set";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_route": {
        Args: { "route_id": string };
        Returns: Database["public"]["CompositeTypes"]["route"];
        SetofOptions: {
          from: "*";
          to: "route";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_route_plan": {
        Args: { "plan_id": string };
        Returns: Database["public"]["CompositeTypes"]["route_plan"];
        SetofOptions: {
          from: "*";
          to: "route_plan";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_subscription": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["subscription"];
        SetofOptions: {
          from: "*";
          to: "subscription";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_wallet": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["wallet"];
        SetofOptions: {
          from: "*";
          to: "wallet";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_webhook_endpoint": {
        Args: { "endpoint_id": string };
        Returns: Database["public"]["CompositeTypes"]["webhook_endpoint"];
        SetofOptions: {
          from: "*";
          to: "webhook_endpoint";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "get_withdrawal": {
        Args: { "withdrawal_id": string };
        Returns: Database["public"]["CompositeTypes"]["withdrawal"];
        SetofOptions: {
          from: "*";
          to: "withdrawal";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "import_deliveries": { Args: { "company_id": string; "created_by": string; "rows": Json }; Returns: Json };
      "list_api_keys": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["api_key_list"];
        SetofOptions: {
          from: "*";
          to: "api_key_list";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_deliveries": {
        Args: {
          "created_from"?: string;
          "created_to"?: string;
          "cursor"?: string;
          "driver_id"?: string;
          "late"?: boolean;
          "page_limit"?: number;
          "payment_status"?: string;
          "q"?: string;
          "status"?: string;
        };
        Returns: Database["public"]["CompositeTypes"]["delivery_page"];
        SetofOptions: {
          from: "*";
          to: "delivery_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_delivery_notifications": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery_notification_list"];
        SetofOptions: {
          from: "*";
          to: "delivery_notification_list";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_driver_locations": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["live_map"];
        SetofOptions: {
          from: "*";
          to: "live_map";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_drivers": {
        Args: { "cursor"?: string; "page_limit"?: number };
        Returns: Database["public"]["CompositeTypes"]["driver_page"];
        SetofOptions: {
          from: "*";
          to: "driver_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_push_subscriptions": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["push_subscription_list"];
        SetofOptions: {
          from: "*";
          to: "push_subscription_list";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_routes": {
        Args: { "cursor"?: string; "day"?: string; "driver_id"?: string; "page_limit"?: number; "status"?: string };
        Returns: Database["public"]["CompositeTypes"]["route_page"];
        SetofOptions: {
          from: "*";
          to: "route_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_wallet_transactions": {
        Args: { "cursor"?: string; "page_limit"?: number };
        Returns: Database["public"]["CompositeTypes"]["wallet_transaction_page"];
        SetofOptions: {
          from: "*";
          to: "wallet_transaction_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_webhook_attempts": {
        Args: { "cursor"?: string; "endpoint_id": string; "page_limit"?: number };
        Returns: Database["public"]["CompositeTypes"]["webhook_attempt_page"];
        SetofOptions: {
          from: "*";
          to: "webhook_attempt_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_webhook_endpoints": {
        Args: Record<PropertyKey, never>;
        Returns: Database["public"]["CompositeTypes"]["webhook_endpoint_list"];
        SetofOptions: {
          from: "*";
          to: "webhook_endpoint_list";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_webhook_events": {
        Args: { "cursor"?: string; "page_limit"?: number };
        Returns: Database["public"]["CompositeTypes"]["webhook_event_page"];
        SetofOptions: {
          from: "*";
          to: "webhook_event_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "list_withdrawals": {
        Args: { "cursor"?: string; "page_limit"?: number };
        Returns: Database["public"]["CompositeTypes"]["withdrawal_page"];
        SetofOptions: {
          from: "*";
          to: "withdrawal_page";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "mark_transfer_in_doubt": {
        Args: { "error_message": string; "withdrawal_id": string };
        Returns: Database["public"]["CompositeTypes"]["withdrawal"];
        SetofOptions: {
          from: "*";
          to: "withdrawal";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "payments_to_reconcile": {
        Args: { "max_rows"?: number };
        Returns: {
          "company_id": string;
          "created_at": string;
          "gateway_payment_id": string;
          "id": string;
        }[];
      };
      "publish_route": {
        Args: { "route_id": string };
        Returns: Database["public"]["CompositeTypes"]["route"];
        SetofOptions: {
          from: "*";
          to: "route";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "quote_route": {
        Args: { "distance_m": number; "duration_s": number };
        Returns: Database["public"]["CompositeTypes"]["route_quote"];
        SetofOptions: {
          from: "*";
          to: "route_quote";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "recall_delivery": {
        Args: { "delivery_id": string; "reason": string; "then_do"?: string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "record_cash_settlement": {
        Args: { "amount": number; "driver_id": string; "note"?: string };
        Returns: Database["public"]["CompositeTypes"]["cash_settlement"];
        SetofOptions: {
          from: "*";
          to: "cash_settlement";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "record_eta": {
        Args: {
          "delivery_id": string;
          "duration_s": number;
          "from_lat": number;
          "from_lng": number;
          "remaining_m": number;
        };
        Returns: boolean;
      };
      "record_notification_outcome": {
        Args: {
          "attempt": number;
          "error"?: string;
          "notification_id": string;
          "outcome": string;
          "provider_message_id"?: string;
        };
        Returns: string;
      };
      "record_push_outcome": {
        Args: { "attempt": number; "error"?: string; "message_id": string; "status_code": number };
        Returns: string;
      };
      "record_refund": {
        Args: { "actor_id": string; "delivery_id": string; "refunded": boolean };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "record_route_plan": {
        Args: { "error"?: string; "plan_id": string; "progress": number; "result"?: Json; "status": string };
        Returns: Database["public"]["CompositeTypes"]["route_plan"];
        SetofOptions: {
          from: "*";
          to: "route_plan";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "record_route_timing": {
        Args: { "ends_at"?: string; "from_lat": number; "from_lng": number; "route_id": string; "stops": Json };
        Returns: boolean;
      };
      "record_webhook_attempt": {
        Args: {
          "attempt": number;
          "delivered": boolean;
          "duration_ms": number;
          "endpoint_id": string;
          "error"?: string;
          "event_id": string;
          "response"?: string;
          "status": number;
        };
        Returns: Json;
      };
      "refundable_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "register_company": {
        Args: { "company_name": string; "document"?: string; "owner_name": string; "owner_user_id": string };
        Returns: Json;
      };
      "register_push_subscription": {
        Args: { "auth": string; "endpoint": string; "p256dh": string; "user_agent"?: string };
        Returns: Database["public"]["CompositeTypes"]["push_subscription"];
        SetofOptions: {
          from: "*";
          to: "push_subscription";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "reopen_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "report_drivers": {
        Args: { "from_day": string; "to_day": string };
        Returns: Database["public"]["CompositeTypes"]["driver_report"];
        SetofOptions: {
          from: "*";
          to: "driver_report";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "report_summary": {
        Args: { "from_day": string; "to_day": string };
        Returns: Database["public"]["CompositeTypes"]["report_summary"];
        SetofOptions: {
          from: "*";
          to: "report_summary";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "request_withdrawal": {
        Args: { "amount": number; "pix_key": string; "pix_key_type": string };
        Returns: Database["public"]["CompositeTypes"]["withdrawal"];
        SetofOptions: {
          from: "*";
          to: "withdrawal";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "resend_webhook_event": {
        Args: { "event_id": string };
        Returns: Database["public"]["CompositeTypes"]["webhook_queued"];
        SetofOptions: {
          from: "*";
          to: "webhook_queued";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "return_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "revoke_api_key": { Args: { "key_id": string }; Returns: undefined };
      "route_insertion_input": { Args: { "delivery_id": string }; Returns: Json };
      "route_plan_input": {
        Args: { "day"?: string; "delivery_ids"?: (string)[]; "driver_ids": (string)[] };
        Returns: Database["public"]["CompositeTypes"]["plan_input"];
        SetofOptions: {
          from: "*";
          to: "plan_input";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "route_stops_input": {
        Args: { "route_id": string; "stops": Json };
        Returns: Database["public"]["CompositeTypes"]["plan_input"];
        SetofOptions: {
          from: "*";
          to: "plan_input";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "route_timing_input": { Args: { "route_id": string }; Returns: Json };
      "run_import_batch": {
        Args: { "errors": Json; "from_ordinal": number; "import_id": string; "next_ordinal": number; "rows": Json };
        Returns: Database["public"]["CompositeTypes"]["delivery_import"];
        SetofOptions: {
          from: "*";
          to: "delivery_import";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "save_gateway_config": {
        Args: {
          "api_key_ciphertext": string;
          "company_id": string;
          "environment": string;
          "webhook_secret_ciphertext": string;
        };
        Returns: Database["public"]["CompositeTypes"]["gateway_status"];
        SetofOptions: {
          from: "*";
          to: "gateway_status";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "send_test_webhook": {
        Args: { "endpoint_id": string };
        Returns: Database["public"]["CompositeTypes"]["webhook_queued"];
        SetofOptions: {
          from: "*";
          to: "webhook_queued";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_delivery_load": {
        Args: { "delivery_id": string; "service_s"?: number; "size"?: number };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_dispatch_settings": {
        Args: {
          "max_active_per_driver"?: number;
          "max_distance_km"?: number;
          "mode"?: string;
          "offer_batch"?: number;
          "offer_timeout_s"?: number;
        };
        Returns: Database["public"]["CompositeTypes"]["dispatch_settings_set"];
        SetofOptions: {
          from: "*";
          to: "dispatch_settings_set";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_driver_vehicle": {
        Args: { "capacity"?: number; "driver_id": string; "plate"?: string; "vehicle_type"?: string };
        Returns: Database["public"]["CompositeTypes"]["driver"];
        SetofOptions: {
          from: "*";
          to: "driver";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_notification_settings": {
        Args: { "channels": (string)[]; "events": (string)[] };
        Returns: Database["public"]["CompositeTypes"]["notification_settings_set"];
        SetofOptions: {
          from: "*";
          to: "notification_settings_set";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_prices": {
        Args: { "base_fee": number; "driver_share": number; "minimum_fee": number; "per_km": number };
        Returns: Database["public"]["CompositeTypes"]["price_table"];
        SetofOptions: {
          from: "*";
          to: "price_table";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_proof_requirements": {
        Args: { "handover_code"?: boolean; "note": boolean; "photo": boolean; "signature": boolean };
        Returns: Database["public"]["CompositeTypes"]["proof_requirements_set"];
        SetofOptions: {
          from: "*";
          to: "proof_requirements_set";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_route_stops": {
        Args: {
          "distance_m": number;
          "duration_s": number;
          "ends_at": string;
          "route_id": string;
          "stops": Json;
          "violations": Json;
        };
        Returns: Database["public"]["CompositeTypes"]["route"];
        SetofOptions: {
          from: "*";
          to: "route";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "set_subscription": {
        Args: { "plan": string };
        Returns: Database["public"]["CompositeTypes"]["subscription"];
        SetofOptions: {
          from: "*";
          to: "subscription";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "start_delivery": {
        Args: { "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "start_import": {
        Args: { "company_id": string; "created_by": string; "errors": Json; "rows": Json; "total": number };
        Returns: Database["public"]["CompositeTypes"]["delivery_import"];
        SetofOptions: {
          from: "*";
          to: "delivery_import";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "start_route_plan": {
        Args: { "request": Json };
        Returns: Database["public"]["CompositeTypes"]["route_plan"];
        SetofOptions: {
          from: "*";
          to: "route_plan";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "track_delivery": { Args: { "client": string; "token": string }; Returns: Json };
      "try_handover_code": { Args: { "code": string; "delivery_id": string }; Returns: string };
      "update_delivery": {
        Args: { "actor_id": string; "changes": Json; "delivery_id": string };
        Returns: Database["public"]["CompositeTypes"]["delivery"];
        SetofOptions: {
          from: "*";
          to: "delivery";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "update_driver": {
        Args: { "active"?: boolean; "driver_id": string; "name"?: string; "phone"?: string };
        Returns: Database["public"]["CompositeTypes"]["driver"];
        SetofOptions: {
          from: "*";
          to: "driver";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "update_my_location": {
        Args: { "accuracy"?: number; "heading"?: number; "lat": number; "lng": number; "speed"?: number };
        Returns: Database["public"]["CompositeTypes"]["driver_location"];
        SetofOptions: {
          from: "*";
          to: "driver_location";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "update_my_location_with_eta": {
        Args: { "accuracy"?: number; "heading"?: number; "lat": number; "lng": number; "speed"?: number };
        Returns: Database["public"]["CompositeTypes"]["location_update"];
        SetofOptions: {
          from: "*";
          to: "location_update";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "update_webhook_endpoint": {
        Args: {
          "description"?: string;
          "enabled"?: boolean;
          "endpoint_id": string;
          "events"?: (string)[];
          "url"?: string;
        };
        Returns: Database["public"]["CompositeTypes"]["webhook_endpoint"];
        SetofOptions: {
          from: "*";
          to: "webhook_endpoint";
          isOneToOne: true;
          isSetofReturn: false;
        };
      };
      "use_api_key": { Args: { "key_hash": string }; Returns: Json };
      "webhook_owner_told": { Args: { "endpoint_id": string }; Returns: undefined };
      "webhook_owners_to_tell": { Args: Record<PropertyKey, never>; Returns: Json };
      "withdrawals_to_reconcile": {
        Args: { "max_rows"?: number };
        Returns: {
          "company_id": string;
          "created_at": string;
          "gateway_transfer_id": string;
          "id": string;
          "in_doubt": boolean;
        }[];
      };
    };
    Enums: {
      [_ in never]: never;
    };
    CompositeTypes: {
      "api_key": {
        "id": string | null;
        "name": string | null;
        "scopes": (string)[] | null;
        "prefix": string | null;
        "created_at": string | null;
        "last_used_at": string | null;
      };
      "api_key_list": {
        "items": (Database["public"]["CompositeTypes"]["api_key"])[] | null;
      };
      "cash_entry": {
        "id": string | null;
        "driver_id": string | null;
        "kind": string | null;
        "amount": number | null;
        "delivery_id": string | null;
        "note": string | null;
        "created_by": string | null;
        "created_at": string | null;
      };
      "cash_settlement": {
        "id": string | null;
        "driver_id": string | null;
        "amount": number | null;
        "note": string | null;
        "created_at": string | null;
        "outstanding": number | null;
      };
      "cash_summary": {
        "date": string | null;
        "items": (Database["public"]["CompositeTypes"]["cash_summary_line"])[] | null;
      };
      "cash_summary_line": {
        "driver_id": string | null;
        "name": string | null;
        "collected": number | null;
        "card_collected": number | null;
        "settled": number | null;
        "outstanding": number | null;
        "deliveries": number | null;
        "mismatches": number | null;
      };
      "company": {
        "id": string | null;
        "name": string | null;
        "gateway": Database["public"]["CompositeTypes"]["gateway_status"] | null;
        "created_at": string | null;
        "document": string | null;
      };
      "delivery": {
        "id": string | null;
        "company_id": string | null;
        "status": string | null;
        "payment_status": string | null;
        "payment_method": string | null;
        "origin_address": string | null;
        "origin": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "destination_address": string | null;
        "destination": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "distance_m": number | null;
        "duration_s": number | null;
        "price": number | null;
        "driver_id": string | null;
        "recipient_name": string | null;
        "recipient_phone": string | null;
        "notes": string | null;
        "payment": Database["public"]["CompositeTypes"]["pix_payment"] | null;
        "cancel_reason": string | null;
        "refund_due": boolean | null;
        "created_at": string | null;
        "updated_at": string | null;
        "accepted_at": string | null;
        "started_at": string | null;
        "completed_at": string | null;
        "cancelled_at": string | null;
        "remaining_m": number | null;
        "eta_at": string | null;
        "eta_refreshed_at": string | null;
        "proof": Database["public"]["CompositeTypes"]["delivery_proof"] | null;
        "tracking_token": string | null;
        "tracking_url": string | null;
        "recipient_email": string | null;
        "attempts": number | null;
        "external_id": string | null;
        "failed_at": string | null;
        "failure_note": string | null;
        "failure_reason": string | null;
        "late": boolean | null;
        "window_end": string | null;
        "window_start": string | null;
        "dispatch_status": string | null;
        "offer_expires_at": string | null;
        "failure_photo_path": string | null;
        "collect_mismatch": boolean | null;
        "collected": Database["public"]["CompositeTypes"]["delivery_collected"] | null;
        "collect": Database["public"]["CompositeTypes"]["delivery_collect"] | null;
        "service_s": number | null;
        "size": number | null;
        "recall_reason": string | null;
        "refund_status": string | null;
        "returned_at": string | null;
      };
      "delivery_collect": {
        "amount": number | null;
        "method": string | null;
        "change_for": number | null;
        "change_due": number | null;
      };
      "delivery_collected": {
        "amount": number | null;
        "method": string | null;
      };
      "delivery_dispatch": {
        "delivery_id": string | null;
        "dispatch_status": string | null;
        "rounds": (Database["public"]["CompositeTypes"]["dispatch_round"])[] | null;
        "offers": (Database["public"]["CompositeTypes"]["dispatch_offer"])[] | null;
      };
      "delivery_import": {
        "id": string | null;
        "status": string | null;
        "total": number | null;
        "processed": number | null;
        "created": number | null;
        "skipped": number | null;
        "errors": Json | null;
        "failure": string | null;
        "created_at": string | null;
        "updated_at": string | null;
      };
      "delivery_notification": {
        "event": string | null;
        "channel": string | null;
        "to": string | null;
        "status": string | null;
        "attempts": number | null;
        "sent_at": string | null;
        "error": string | null;
      };
      "delivery_notification_list": {
        "items": (Database["public"]["CompositeTypes"]["delivery_notification"])[] | null;
      };
      "delivery_page": {
        "items": (Database["public"]["CompositeTypes"]["delivery"])[] | null;
        "next_cursor": string | null;
      };
      "delivery_proof": {
        "photo_path": string | null;
        "signature_path": string | null;
        "note": string | null;
      };
      "delivery_trail": {
        "delivery_id": string | null;
        "points": (Database["public"]["CompositeTypes"]["trail_point"])[] | null;
      };
      "dispatch_candidate": {
        "driver_id": string | null;
        "name": string | null;
        "rank": number | null;
        "distance_m": number | null;
        "duration_s": number | null;
        "completed_today": number | null;
        "active_deliveries": number | null;
        "left_out": string | null;
        "lat": number | null;
        "lng": number | null;
      };
      "dispatch_offer": {
        "id": string | null;
        "driver_id": string | null;
        "name": string | null;
        "attempt": number | null;
        "round": number | null;
        "offered_at": string | null;
        "expires_at": string | null;
        "outcome": string | null;
        "decided_at": string | null;
      };
      "dispatch_round": {
        "round": number | null;
        "attempt": number | null;
        "mode": string | null;
        "ranked_at": string | null;
        "ranked_by": string | null;
        "routing_error": string | null;
        "outcome": string | null;
        "driver_id": string | null;
        "candidates": (Database["public"]["CompositeTypes"]["dispatch_candidate"])[] | null;
      };
      "dispatch_settings_set": {
        "mode": string | null;
        "offer_timeout_s": number | null;
        "offer_batch": number | null;
        "max_active_per_driver": number | null;
        "max_distance_km": number | null;
      };
      "driver": {
        "id": string | null;
        "user_id": string | null;
        "name": string | null;
        "email": string | null;
        "phone": string | null;
        "active": boolean | null;
        "created_at": string | null;
        "updated_at": string | null;
        "vehicle": Database["public"]["CompositeTypes"]["vehicle"] | null;
      };
      "driver_cash": {
        "driver_id": string | null;
        "outstanding": number | null;
        "collected": number | null;
        "settled": number | null;
        "card_collected": number | null;
        "entries": (Database["public"]["CompositeTypes"]["cash_entry"])[] | null;
      };
      "driver_day": {
        "date": string | null;
        "driver_id": string | null;
        "online_minutes": number | null;
        "distance_m": number | null;
        "completed": number | null;
        "failed": number | null;
        "returned": number | null;
        "earnings": number | null;
        "cash_collected": number | null;
        "deliveries": (Database["public"]["CompositeTypes"]["delivery"])[] | null;
      };
      "driver_location": {
        "driver_id": string | null;
        "lat": number | null;
        "lng": number | null;
        "heading": number | null;
        "speed": number | null;
        "accuracy": number | null;
        "updated_at": string | null;
      };
      "driver_page": {
        "items": (Database["public"]["CompositeTypes"]["driver"])[] | null;
        "next_cursor": string | null;
      };
      "driver_report": {
        "from_day": string | null;
        "to_day": string | null;
        "items": (Database["public"]["CompositeTypes"]["driver_report_line"])[] | null;
      };
      "driver_report_line": {
        "driver_id": string | null;
        "name": string | null;
        "completed": number | null;
        "failed": number | null;
        "on_time_rate": number | null;
        "avg_delivery_minutes": number | null;
        "earnings": number | null;
      };
      "gateway_status": {
        "configured": boolean | null;
        "environment": string | null;
      };
      "geo_point": {
        "lat": number | null;
        "lng": number | null;
      };
      "live_map": {
        "items": (Database["public"]["CompositeTypes"]["live_map_driver"])[] | null;
      };
      "live_map_driver": {
        "driver_id": string | null;
        "name": string | null;
        "lat": number | null;
        "lng": number | null;
        "heading": number | null;
        "speed": number | null;
        "accuracy": number | null;
        "updated_at": string | null;
      };
      "location_update": {
        "location": Database["public"]["CompositeTypes"]["driver_location"] | null;
        "eta_due": Json | null;
      };
      "new_delivery": {
        "payment_method": string | null;
        "origin_address": string | null;
        "origin_lat": number | null;
        "origin_lng": number | null;
        "destination_address": string | null;
        "destination_lat": number | null;
        "destination_lng": number | null;
        "distance_m": number | null;
        "duration_s": number | null;
        "recipient_name": string | null;
        "recipient_phone": string | null;
        "notes": string | null;
        "driver_id": string | null;
        "charged_price": number | null;
        "gateway_payment_id": string | null;
        "pix_copy_paste": string | null;
        "pix_qr_code_image": string | null;
        "payment_due_date": string | null;
        "window_start": string | null;
        "window_end": string | null;
        "external_id": string | null;
        "recipient_email": string | null;
        "collect_amount": number | null;
        "collect_method": string | null;
        "collect_change_for": number | null;
      };
      "notification_settings_set": {
        "events": (string)[] | null;
        "channels": (string)[] | null;
      };
      "pix_payment": {
        "gateway_payment_id": string | null;
        "pix_copy_paste": string | null;
        "pix_qr_code_image": string | null;
        "due_date": string | null;
      };
      "plan_delivery": {
        "id": string | null;
        "status": string | null;
        "origin": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "destination": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "window_start": string | null;
        "window_end": string | null;
        "size": number | null;
        "service_s": number | null;
      };
      "plan_driver": {
        "id": string | null;
        "name": string | null;
        "position": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "position_at": string | null;
        "capacity": number | null;
      };
      "plan_input": {
        "deliveries": (Database["public"]["CompositeTypes"]["plan_delivery"])[] | null;
        "drivers": (Database["public"]["CompositeTypes"]["plan_driver"])[] | null;
      };
      "price_table": {
        "base_fee": number | null;
        "per_km": number | null;
        "minimum_fee": number | null;
        "driver_share": number | null;
        "updated_at": string | null;
      };
      "proof_requirements_set": {
        "photo": boolean | null;
        "signature": boolean | null;
        "note": boolean | null;
        "handover_code": boolean | null;
      };
      "push_subscription": {
        "id": string | null;
        "endpoint": string | null;
        "user_agent": string | null;
        "created_at": string | null;
        "last_sent_at": string | null;
      };
      "push_subscription_list": {
        "items": (Database["public"]["CompositeTypes"]["push_subscription"])[] | null;
      };
      "report_day": {
        "day": string | null;
        "created": number | null;
        "completed": number | null;
        "revenue": number | null;
        "cancelled": number | null;
        "failed": number | null;
      };
      "report_summary": {
        "created": number | null;
        "completed": number | null;
        "cancelled": number | null;
        "failed": number | null;
        "on_time_rate": number | null;
        "avg_delivery_minutes": number | null;
        "revenue": number | null;
        "driver_earnings": number | null;
        "by_day": (Database["public"]["CompositeTypes"]["report_day"])[] | null;
      };
      "route": {
        "id": string | null;
        "company_id": string | null;
        "status": string | null;
        "driver_id": string | null;
        "start": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "end": Database["public"]["CompositeTypes"]["geo_point"] | null;
        "starts_at": string | null;
        "ends_at": string | null;
        "shift_end": string | null;
        "capacity": number | null;
        "distance_m": number | null;
        "duration_s": number | null;
        "engine": string | null;
        "violations": Json | null;
        "stops": (Database["public"]["CompositeTypes"]["route_stop"])[] | null;
        "created_at": string | null;
        "updated_at": string | null;
        "published_at": string | null;
      };
      "route_page": {
        "items": (Database["public"]["CompositeTypes"]["route"])[] | null;
        "next_cursor": string | null;
      };
      "route_plan": {
        "id": string | null;
        "status": string | null;
        "progress": number | null;
        "result": Json | null;
        "error": string | null;
        "created_at": string | null;
        "updated_at": string | null;
      };
      "route_quote": {
        "distance_m": number | null;
        "duration_s": number | null;
        "price": number | null;
      };
      "route_stop": {
        "seq": number | null;
        "delivery_id": string | null;
        "kind": string | null;
        "lat": number | null;
        "lng": number | null;
        "address": string | null;
        "arrival_at": string | null;
        "window_start": string | null;
        "window_end": string | null;
        "status": string | null;
        "recipient_name": string | null;
        "size": number | null;
        "service_s": number | null;
      };
      "subscription": {
        "plan": string | null;
        "status": string | null;
        "current_period_end": string | null;
      };
      "trail_point": {
        "lat": number | null;
        "lng": number | null;
        "recorded_at": string | null;
      };
      "vehicle": {
        "type": string | null;
        "plate": string | null;
        "capacity": number | null;
      };
      "wallet": {
        "driver_id": string | null;
        "balance": number | null;
        "available_balance": number | null;
        "currency": string | null;
      };
      "wallet_transaction": {
        "id": string | null;
        "kind": string | null;
        "amount": number | null;
        "delivery_id": string | null;
        "withdrawal_id": string | null;
        "created_at": string | null;
      };
      "wallet_transaction_page": {
        "items": (Database["public"]["CompositeTypes"]["wallet_transaction"])[] | null;
        "next_cursor": string | null;
      };
      "webhook_attempt": {
        "event_id": string | null;
        "type": string | null;
        "attempt": number | null;
        "status": number | null;
        "duration_ms": number | null;
        "response": string | null;
        "error": string | null;
        "at": string | null;
      };
      "webhook_attempt_page": {
        "items": (Database["public"]["CompositeTypes"]["webhook_attempt"])[] | null;
        "next_cursor": string | null;
      };
      "webhook_endpoint": {
        "id": string | null;
        "url": string | null;
        "events": (string)[] | null;
        "description": string | null;
        "enabled": boolean | null;
        "disabled_reason": string | null;
        "failing_since": string | null;
        "created_at": string | null;
        "updated_at": string | null;
      };
      "webhook_endpoint_list": {
        "items": (Database["public"]["CompositeTypes"]["webhook_endpoint"])[] | null;
      };
      "webhook_event": {
        "id": string | null;
        "received_at": string | null;
        "event": string | null;
        "result": string | null;
        "object_id": string | null;
        "detail": string | null;
      };
      "webhook_event_page": {
        "items": (Database["public"]["CompositeTypes"]["webhook_event"])[] | null;
        "next_cursor": string | null;
      };
      "webhook_queued": {
        "event_id": string | null;
        "queued": number | null;
      };
      "withdrawal": {
        "id": string | null;
        "company_id": string | null;
        "driver_id": string | null;
        "amount": number | null;
        "pix_key": string | null;
        "pix_key_type": string | null;
        "status": string | null;
        "in_doubt": boolean | null;
        "gateway_transfer_id": string | null;
        "error_message": string | null;
        "failure_kind": string | null;
        "created_at": string | null;
        "updated_at": string | null;
        "completed_at": string | null;
      };
      "withdrawal_page": {
        "items": (Database["public"]["CompositeTypes"]["withdrawal"])[] | null;
        "next_cursor": string | null;
      };
    };
  };
};

type DatabaseWithoutInternals = Omit<Database, "__InternalSupabase">;

type DefaultSchema = DatabaseWithoutInternals[Extract<keyof Database, "public">];

export type Tables<
  DefaultSchemaTableNameOrOptions extends
    | keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  } ? keyof (
      & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
      & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"]
    )
    : never = never,
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals } ? (
    & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    & DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Views"]
  )[TableName] extends {
    Row: infer R;
  } ? R
  : never
  : DefaultSchemaTableNameOrOptions extends keyof (DefaultSchema["Tables"] & DefaultSchema["Views"])
    ? (DefaultSchema["Tables"] & DefaultSchema["Views"])[DefaultSchemaTableNameOrOptions] extends {
      Row: infer R;
    } ? R
    : never
  : never;

export type TablesInsert<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  } ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
    Insert: infer I;
  } ? I
  : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
      Insert: infer I;
    } ? I
    : never
  : never;

export type TablesUpdate<
  DefaultSchemaTableNameOrOptions extends
    | keyof DefaultSchema["Tables"]
    | { schema: keyof DatabaseWithoutInternals },
  TableName extends DefaultSchemaTableNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  } ? keyof DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"]
    : never = never,
> = DefaultSchemaTableNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaTableNameOrOptions["schema"]]["Tables"][TableName] extends {
    Update: infer U;
  } ? U
  : never
  : DefaultSchemaTableNameOrOptions extends keyof DefaultSchema["Tables"]
    ? DefaultSchema["Tables"][DefaultSchemaTableNameOrOptions] extends {
      Update: infer U;
    } ? U
    : never
  : never;

export type Enums<
  DefaultSchemaEnumNameOrOptions extends
    | keyof DefaultSchema["Enums"]
    | { schema: keyof DatabaseWithoutInternals },
  EnumName extends DefaultSchemaEnumNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  } ? keyof DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"]
    : never = never,
> = DefaultSchemaEnumNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[DefaultSchemaEnumNameOrOptions["schema"]]["Enums"][EnumName]
  : DefaultSchemaEnumNameOrOptions extends keyof DefaultSchema["Enums"]
    ? DefaultSchema["Enums"][DefaultSchemaEnumNameOrOptions]
  : never;

export type CompositeTypes<
  PublicCompositeTypeNameOrOptions extends
    | keyof DefaultSchema["CompositeTypes"]
    | { schema: keyof DatabaseWithoutInternals },
  CompositeTypeName extends PublicCompositeTypeNameOrOptions extends {
    schema: keyof DatabaseWithoutInternals;
  } ? keyof DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"]
    : never = never,
> = PublicCompositeTypeNameOrOptions extends { schema: keyof DatabaseWithoutInternals }
  ? DatabaseWithoutInternals[PublicCompositeTypeNameOrOptions["schema"]]["CompositeTypes"][CompositeTypeName]
  : PublicCompositeTypeNameOrOptions extends keyof DefaultSchema["CompositeTypes"]
    ? DefaultSchema["CompositeTypes"][PublicCompositeTypeNameOrOptions]
  : never;

export const Constants = {
  "public": {
    Enums: {},
  },
} as const;
